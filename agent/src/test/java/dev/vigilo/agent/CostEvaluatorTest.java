package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.q;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cost evaluator: the agent call's priced cost against max_usd, exactly, from the evaluation context. */
class CostEvaluatorTest {
    @TempDir
    Path dir;

    EvaluatorSet plan(String entry) {
        ObjectNode e = (ObjectNode) q(entry);
        e.put("index", 0);
        ArrayNode plan = TestSupport.MAPPER.createArrayNode().add(e);
        return Evaluators.fromPlan(plan, env(dir));
    }

    EvaluatorResult costing(Optional<BigDecimal> cost) {
        EvaluationContext context = new EvaluationContext(
                Duration.ofMillis(5), List.of(new TokenUsage("m", 100, 10, 110, 0)), cost, EvaluatorObserver.NONE);
        return plan("{'name':'cheap','kind':'cost','max_usd':'0.01'}")
                .evaluate(1L, caseOf("q-1", "question", null), "any output", context)
                .get(0);
    }

    @Test
    void passesAtOrUnderTheLimitExactlyAndFailsOverIt() {
        EvaluatorResult at = costing(Optional.of(new BigDecimal("0.0100")));
        assertThat(at.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(at.reason()).contains("agent cost $0.01, within the limit of $0.01");
        // One millionth of a cent over: a double would round it away, the exact decimal does not.
        EvaluatorResult over = costing(Optional.of(new BigDecimal("0.01000001")));
        assertThat(over.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(over.score()).isZero();
        assertThat(over.reason()).contains("agent cost $0.01000001, over the limit of $0.01");
    }

    @Test
    void anUnknownCostIsAnErrorNamingTheModelNeverAPass() {
        EvaluatorResult r = costing(Optional.empty());
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.ERROR);
        assertThat(r.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.COST_UNKNOWN);
        assertThat(r.error().orElseThrow().message())
                .isEqualTo("the agent's cost is unknown: no price for model m; add it to the profile's pricing");
    }

    @Test
    void aMissingOrNonPositiveLimitIsRefused() {
        assertThatThrownBy(() -> plan("{'name':'c','kind':'cost'}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("evaluator_plan[0].max_usd: is required");
        assertThatThrownBy(() -> plan("{'name':'c','kind':'cost','max_usd':'0'}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("evaluator_plan[0].max_usd: must be greater than 0");
    }
}
