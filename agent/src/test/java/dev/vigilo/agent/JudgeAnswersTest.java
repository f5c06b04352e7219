package dev.vigilo.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How a judge's answer text is read (docs/formats/agent-protocol.md, "Judges"). */
class JudgeAnswersTest {
    static final JudgeScale TEN = JudgeScale.range(0, 10);

    static JudgeScale grades() {
        Map<String, Double> g = new LinkedHashMap<>();
        g.put("A", 1.0);
        g.put("B", 0.7);
        g.put("F", 0.0);
        return JudgeScale.ofGrades(g);
    }

    static double score(String answer, JudgeScale scale) {
        return ((JudgeScale.Value) JudgeAnswers.read(answer, scale).scored()).normalised();
    }

    static String refused(String answer, JudgeScale scale) {
        return ((JudgeScale.Refused) JudgeAnswers.read(answer, scale).scored()).why();
    }

    @Test
    void structuredAnswersWithAStringScoreOrExtraKeysAreRead() {
        assertThat(score("{\"score\": \"8\", \"reason\": \"ok\", \"confidence\": 0.9}", TEN))
                .isEqualTo(0.8);
        assertThat(score("{\"score\": \"7/10\"}", TEN)).isEqualTo(0.7);
        assertThat(JudgeAnswers.read("{\"score\": 5}", TEN).reason()).isEmpty();
        assertThat(score("{\"score\": \"b\", \"reason\": \"x\"}", grades())).isEqualTo(0.7);
    }

    @Test
    void theFirstObjectWithAScoreWinsOverEarlierObjectsWithout() {
        String text =
                "Criteria: {\"accuracy\": true}. Verdict: {\"score\": 4, \"reason\": \"partly\"} and {\"score\": 9}";
        JudgeAnswers.Read r = JudgeAnswers.read(text, TEN);
        assertThat(((JudgeScale.Value) r.scored()).normalised()).isEqualTo(0.4);
        assertThat(r.reason()).contains("partly");
    }

    @Test
    void anObjectWithDuplicateKeysIsNotTrusted() {
        // Strict JSON: a duplicated score is no score, and the text fallback finds none either.
        assertThat(refused("{\"score\": 1, \"score\": 9}", TEN)).contains("no JSON object with a \"score\"");
    }

    @Test
    void unusableScoresSayWhy() {
        assertThat(refused("", TEN)).isEqualTo("the answer is empty");
        assertThat(refused("{\"score\": \"high\"}", TEN)).isEqualTo("the score \"high\" is not a number");
        assertThat(refused("{\"score\": 10.5}", TEN)).isEqualTo("the score 10.5 is outside the scale [0, 10]");
        assertThat(refused("{\"score\": null}", TEN)).isEqualTo("the answer has no score");
        assertThat(refused("score: lots", TEN)).isEqualTo("the score lots is not a number");
        assertThat(refused("{\"score\": \"E\"}", grades())).isEqualTo("the grade \"E\" is not one of A, B, F");
        assertThat(refused("{\"score\": NaN}", TEN)).contains("no JSON object");
    }

    @Test
    void onlyTheFirstBracesAreTried() {
        String text = "{".repeat(JudgeAnswers.MAX_OBJECT_STARTS) + " {\"score\": 9}";
        assertThat(refused(text, TEN)).contains("no JSON object with a \"score\"");
    }
}
