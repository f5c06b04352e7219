package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;

/**
 * {@code latency}: the output passes (score 1, else 0) when the agent call's time ({@link
 * EvaluationContext#agentElapsed()}, first attempt's start to last attempt's end) in whole milliseconds, rounded up,
 * is at most {@code max_ms}. Rounded up so that the figure in the reason is the one compared: 1000.2 ms is "1001 ms"
 * and fails a limit of 1000. An output evaluated without a context (no agent call) has taken 0 ms.
 */
final class LatencyEvaluator implements Evaluator {
    private final long maxMs;

    LatencyEvaluator(long maxMs) {
        this.maxMs = maxMs;
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output) {
        return evaluate(caseRecord, caseTree, output, EvaluationContext.NONE);
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output, EvaluationContext context) {
        long ms = millisRoundedUp(context.agentElapsed());
        boolean passed = ms <= maxMs;
        return Verdict.of(
                passed, "agent took " + ms + " ms, " + (passed ? "within" : "over") + " the limit of " + maxMs + " ms");
    }

    static long millisRoundedUp(Duration d) {
        long ms = d.toMillis();
        return d.minusMillis(ms).isZero() ? ms : ms + 1;
    }
}
