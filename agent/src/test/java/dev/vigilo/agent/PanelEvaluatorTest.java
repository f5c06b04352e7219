package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.MAPPER;
import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kind: panel} against a real local server whose answer depends on the model asked: {@code good} scores 8,
 * {@code fair} 6, {@code poor} 4 (of 10), {@code mute} answers prose without a score, {@code gone} answers 400.
 */
class PanelEvaluatorTest {
    @TempDir
    Path dir;

    OpenAiTestServer server;
    EvaluatorSet set;

    @BeforeEach
    void start() {
        server = OpenAiTestServer.start();
        server.answerWith(r -> switch (r.body().path("model").asText()) {
            case "good" -> Reply.judgement(8, "good answer").withUsage(10, 1);
            case "fair" -> Reply.judgement(6, "fair answer").withUsage(10, 2);
            case "poor" -> Reply.judgement(4, "poor answer").withUsage(10, 3);
            case "gone" -> Reply.error(400, "no such model");
            default -> Reply.content("I would rather not say.").withUsage(10, 4);
        });
    }

    @AfterEach
    void stop() {
        if (set != null) {
            set.close();
        }
        server.close();
    }

    ObjectNode judge(String name, String model) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("name", name);
        n.put("url", server.chatUrl().toString());
        n.put("model", model);
        n.putNull("api_key_env");
        n.put("rubric", "Grade the answer to {{input}}.");
        n.putObject("scale").put("min", 0).put("max", 10);
        n.put("pass_score", 0.5);
        n.put("max_attempts", 2);
        n.put("timeout_seconds", 5);
        return n;
    }

    ObjectNode panel(String aggregate, Double passScore, String... models) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("index", 0);
        n.put("name", "panel");
        n.put("kind", "panel");
        ArrayNode judges = n.putArray("judges");
        for (int i = 0; i < models.length; i++) {
            judges.add(judge("j" + (i + 1), models[i]));
        }
        n.put("aggregate", aggregate);
        n.put("pass_score", passScore);
        return n;
    }

    EvaluatorResult evaluate(ObjectNode panel) {
        return evaluate(panel, EvaluatorObserver.NONE);
    }

    EvaluatorResult evaluate(ObjectNode panel, EvaluatorObserver observer) {
        ArrayNode plan = MAPPER.createArrayNode().add(panel);
        set = Evaluators.fromPlan(plan, env(dir));
        return set.evaluate(
                        1L,
                        caseOf("c1", "What is 2+2?", "4"),
                        "4",
                        new EvaluationContext(Duration.ZERO, List.of(), observer))
                .get(0);
    }

    @Test
    void meanAggregatesTheJudgesScoresAndKeepsEveryVote() {
        EvaluatorResult r = evaluate(panel("mean", 0.6, "good", "fair", "poor"));
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(r.score()).isCloseTo(0.6, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(r.reason().orElseThrow()).contains("mean 0.6 >= pass_score 0.6 (j1 0.8, j2 0.6, j3 0.4)");
        assertThat(r.votes())
                .containsExactly(
                        new JudgeVote("j1", OptionalDouble.of(0.8), Optional.of("good answer")),
                        new JudgeVote("j2", OptionalDouble.of(0.6), Optional.of("fair answer")),
                        new JudgeVote("j3", OptionalDouble.of(0.4), Optional.of("poor answer")));
        // Every judge's tokens count.
        assertThat(r.usage()).extracting(TokenUsage::completionTokens).containsExactly(1L, 2L, 3L);
        assertThat(server.requestCount()).isEqualTo(3);
    }

    @Test
    void minIsTheLowestScore() {
        EvaluatorResult r = evaluate(panel("min", 0.5, "good", "fair", "poor"));
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(r.score()).isEqualTo(0.4);
        assertThat(r.reason().orElseThrow()).contains("min 0.4 < pass_score 0.5");
    }

    @Test
    void majorityPassesWhenMoreThanHalfOfTheJudgesPass() {
        EvaluatorResult r = evaluate(panel("majority", null, "good", "fair", "poor"));
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(r.score()).isCloseTo(2 / 3.0, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(r.reason().orElseThrow()).contains("2 of 3 judges passed: a majority");
        EvaluatorResult tie = evaluate(panel("majority", null, "good", "poor"));
        assertThat(tie.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(tie.score()).isEqualTo(0.5);
        assertThat(Evaluators.passScore(panel("majority", null, "good", "poor")))
                .isGreaterThan(0.5);
        assertThat(Evaluators.passScore(panel("mean", 0.7, "good", "poor"))).isEqualTo(0.7);
    }

    @Test
    void anUnscoredJudgeIsLeftOutWhileTwoOthersScore() {
        EvaluatorResult r = evaluate(panel("mean", 0.5, "good", "mute", "poor"));
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(r.score()).isCloseTo(0.6, org.assertj.core.data.Offset.offset(1e-12));
        JudgeVote mute = r.votes().get(1);
        assertThat(mute.score()).isEmpty();
        assertThat(mute.reason().orElseThrow())
                .startsWith("unscored: judge \"panel/j2\"")
                .contains("rather not say");
        assertThat(r.reason().orElseThrow()).contains("j2 unscored");
        // The mute judge was asked twice (max_attempts 2); its tokens count too.
        assertThat(r.usage()).hasSize(4);
    }

    @Test
    void fewerThanTwoScoringJudgesIsUnscoredWithTheVotesKept() {
        EvaluatorResult r = evaluate(panel("mean", 0.5, "good", "mute", "mute"));
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.ERROR);
        assertThat(r.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.UNSCORED);
        assertThat(r.error().orElseThrow().message())
                .contains("panel \"panel\": 1 of 3 judges scored, at least 2 must")
                .contains("judge \"j2\": unscored");
        assertThat(r.votes()).hasSize(3);
        assertThat(r.votes().get(0).score()).hasValue(0.8);
    }

    @Test
    void aFailedJudgeMakesThePanelsErrorJudgeFailed() {
        EvaluatorResult r = evaluate(panel("mean", 0.5, "good", "mute", "gone"));
        assertThat(r.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.JUDGE_FAILED);
        assertThat(r.votes().get(2).reason().orElseThrow())
                .startsWith("judge_failed: ")
                .contains("HTTP 400");
    }

    @Test
    void eachJudgesCallsAreObservedUnderThePanelsIndexAndTheJudgesName() {
        List<String> seen = new CopyOnWriteArrayList<>();
        evaluate(panel("mean", 0.5, "good", "fair"), new EvaluatorObserver() {
            @Override
            public void onModelRequest(int evaluator, String name, int attempt, JsonNode request) {
                seen.add(evaluator + " " + name + " " + attempt + " "
                        + request.path("model").asText());
            }
        });
        assertThat(seen).containsExactly("0 panel/j1 1 good", "0 panel/j2 1 fair");
    }

    @Test
    void aPanelNeedsTwoUniquelyNamedJudges() {
        ObjectNode one = panel("mean", 0.5, "good");
        assertThatThrownBy(() -> Evaluators.fromPlan(MAPPER.createArrayNode().add(one), env(dir)))
                .hasMessageContaining("evaluator_plan[0].judges: must be a list of two or more judges");
        ObjectNode twins = panel("mean", 0.5, "good", "fair");
        ((ObjectNode) twins.path("judges").get(1)).put("name", "j1");
        assertThatThrownBy(() -> Evaluators.fromPlan(MAPPER.createArrayNode().add(twins), env(dir)))
                .hasMessageContaining("evaluator_plan[0].judges[1].name: repeats \"j1\"");
    }

    @Test
    void nonPanelResultsHaveNoVotes() {
        EvaluatorResult r = new EvaluatorResult(
                0,
                "e",
                EvaluatorResult.Status.PASSED,
                1,
                Optional.empty(),
                Duration.ZERO,
                Optional.of("ok"),
                List.of());
        assertThat(r.votes()).isEmpty();
    }
}
