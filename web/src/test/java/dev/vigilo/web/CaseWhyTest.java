package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.view.CaseResults;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The cases page's "why it failed": the first evaluator that errored or failed, with its reason and score. */
class CaseWhyTest {
    static CaseResults.ExecutedCase executed(CaseResults.EvaluatorOutcome... evaluators) {
        return new CaseResults.ExecutedCase(
                7,
                "case-7",
                0,
                0,
                CaseResults.Outcome.FAILED,
                false,
                1,
                12,
                Optional.empty(),
                Optional.empty(),
                List.of(evaluators),
                Map.of("all", "failed"),
                4,
                false,
                Map.of(),
                1,
                Optional.empty());
    }

    static CaseResults.EvaluatorOutcome outcome(String name, boolean passed, String reason) {
        return new CaseResults.EvaluatorOutcome(
                name, passed, passed ? 1 : 0.2, Optional.empty(), Optional.empty(), 3, Optional.ofNullable(reason));
    }

    @Test
    void theFirstFailingEvaluatorSaysWhy() {
        assertThat(RunPages.why(
                        executed(outcome("exact", true, "matched `42`"), outcome("quality", false, "off by one"))))
                .isEqualTo("quality failed (score 0.2): off by one");
        assertThat(RunPages.why(executed(outcome("exact", false, null)))).isEqualTo("exact failed (score 0.2)");
        assertThat(RunPages.why(executed(new CaseResults.EvaluatorOutcome(
                        "judge",
                        false,
                        0,
                        Optional.of("unscored"),
                        Optional.of("no score in \"hmm\""),
                        5,
                        Optional.empty()))))
                .isEqualTo("judge: unscored: no score in \"hmm\"");
        assertThat(RunPages.why(executed(outcome("exact", true, "matched")))).isEmpty();
    }
}
