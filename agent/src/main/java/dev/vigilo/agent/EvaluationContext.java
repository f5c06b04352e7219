package dev.vigilo.agent;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What evaluators may know of a case's agent call besides its output, and where model-calling evaluators report
 * their exchanges.
 *
 * @param agentElapsed the agent call's time, first attempt's start to last attempt's end (the outcome's elapsed)
 * @param agentUsage   the tokens of every attempt of the agent call, in attempt order (empty for command agents)
 * @param observer     sees the model calls of judges as they happen (transcripts); {@link EvaluatorObserver#NONE}
 *                     to see nothing
 */
public record EvaluationContext(Duration agentElapsed, List<TokenUsage> agentUsage, EvaluatorObserver observer) {
    /** No agent time, no usage, nothing observed: for evaluating an output alone. */
    public static final EvaluationContext NONE =
            new EvaluationContext(Duration.ZERO, List.of(), EvaluatorObserver.NONE);

    public EvaluationContext {
        Objects.requireNonNull(agentElapsed, "agentElapsed");
        agentUsage = List.copyOf(agentUsage);
        Objects.requireNonNull(observer, "observer");
    }

    /** The context of an agent call that ended with {@code outcome}. */
    public static EvaluationContext of(AgentOutcome outcome, EvaluatorObserver observer) {
        return new EvaluationContext(
                outcome.elapsed(),
                outcome.attempts().stream().flatMap(a -> a.usage().stream()).toList(),
                observer);
    }
}
