package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.llm.Pricing;
import java.math.BigDecimal;
import java.util.Optional;

/**
 * {@code cost}: the output passes (score 1, else 0) when the agent call's cost ({@link
 * EvaluationContext#agentCostUsd()}: every attempt's tokens, priced by the run's {@code pricing}) is at most
 * {@code max_usd}; judges' calls are not part of it (they run after it, and grade rather than answer). A cost that is
 * unknown (a model without a price) cannot be compared: the evaluator errors with {@code cost_unknown} rather than
 * guess. An agent that called no model cost $0.
 */
final class CostEvaluator implements Evaluator {
    private final BigDecimal maxUsd;

    CostEvaluator(BigDecimal maxUsd) {
        this.maxUsd = maxUsd;
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output) {
        return evaluate(caseRecord, caseTree, output, EvaluationContext.NONE);
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output, EvaluationContext context) {
        Optional<BigDecimal> cost = context.agentCostUsd();
        if (cost.isEmpty()) {
            String models = context.agentUsage().stream()
                    .map(TokenUsage::model)
                    .distinct()
                    .sorted()
                    .reduce((a, b) -> a + ", " + b)
                    .orElse("?");
            return Verdict.error(
                    EvaluatorErrorType.COST_UNKNOWN,
                    "the agent's cost is unknown: no price for model " + models + "; add it to the profile's pricing");
        }
        boolean passed = cost.get().compareTo(maxUsd) <= 0;
        return Verdict.of(
                passed,
                "agent cost $" + Pricing.text(cost.get()) + ", " + (passed ? "within" : "over") + " the limit of $"
                        + Pricing.text(maxUsd));
    }
}
