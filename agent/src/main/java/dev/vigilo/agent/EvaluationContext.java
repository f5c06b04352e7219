package dev.vigilo.agent;

import dev.vigilo.agent.sandbox.SandboxAttempt;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * What evaluators may know of a case's agent call besides its output, and where model-calling evaluators report
 * their exchanges.
 *
 * @param agentElapsed the agent call's time, first attempt's start to last attempt's end (the outcome's elapsed)
 * @param agentUsage   the tokens of every attempt of the agent call, in attempt order (empty for command agents)
 * @param agentCostUsd what those tokens cost by the run's pricing; empty when a model has no price; zero without calls
 * @param observer     sees the model calls of judges as they happen (transcripts); {@link EvaluatorObserver#NONE}
 *                     to see nothing
 * @param toolCalls    the tool calls of the attempt that answered, in order ({@link AgentOutcome#toolCalls()})
 * @param sandbox      the sandbox the agent's commands ran in, where command evaluators run too (they see the work
 *                     directory the agent left); empty to run them on the host
 */
public record EvaluationContext(
        Duration agentElapsed,
        List<TokenUsage> agentUsage,
        Optional<BigDecimal> agentCostUsd,
        EvaluatorObserver observer,
        List<AgentToolCall> toolCalls,
        Optional<SandboxAttempt> sandbox) {
    /** No agent time, no usage, nothing observed: for evaluating an output alone. */
    public static final EvaluationContext NONE =
            new EvaluationContext(Duration.ZERO, List.of(), Optional.of(BigDecimal.ZERO), EvaluatorObserver.NONE);

    public EvaluationContext {
        Objects.requireNonNull(agentElapsed, "agentElapsed");
        agentUsage = List.copyOf(agentUsage);
        Objects.requireNonNull(agentCostUsd, "agentCostUsd");
        Objects.requireNonNull(observer, "observer");
        toolCalls = List.copyOf(toolCalls);
        Objects.requireNonNull(sandbox, "sandbox");
    }

    /** A context without tool calls whose command evaluators run on the host. */
    public EvaluationContext(
            Duration agentElapsed,
            List<TokenUsage> agentUsage,
            Optional<BigDecimal> agentCostUsd,
            EvaluatorObserver observer) {
        this(agentElapsed, agentUsage, agentCostUsd, observer, List.of(), Optional.empty());
    }

    /** This context with the tool calls of the answering attempt. */
    public EvaluationContext withToolCalls(List<AgentToolCall> calls) {
        return new EvaluationContext(agentElapsed, agentUsage, agentCostUsd, observer, calls, sandbox);
    }

    /** This context with command evaluators run in {@code attempt}. */
    public EvaluationContext inSandbox(SandboxAttempt attempt) {
        return new EvaluationContext(agentElapsed, agentUsage, agentCostUsd, observer, toolCalls, Optional.of(attempt));
    }

    /** A context without pricing: the cost is zero without calls, else unknown. */
    public EvaluationContext(Duration agentElapsed, List<TokenUsage> agentUsage, EvaluatorObserver observer) {
        this(
                agentElapsed,
                agentUsage,
                agentUsage.isEmpty() ? Optional.of(BigDecimal.ZERO) : Optional.empty(),
                observer);
    }

    /** The context of an agent call that ended with {@code outcome}, without pricing. */
    public static EvaluationContext of(AgentOutcome outcome, EvaluatorObserver observer) {
        return of(outcome, u -> u.isEmpty() ? Optional.of(BigDecimal.ZERO) : Optional.empty(), observer);
    }

    /** The context of an agent call that ended with {@code outcome}, its tokens priced by {@code cost}. */
    public static EvaluationContext of(
            AgentOutcome outcome, Function<List<TokenUsage>, Optional<BigDecimal>> cost, EvaluatorObserver observer) {
        List<TokenUsage> usage =
                outcome.attempts().stream().flatMap(a -> a.usage().stream()).toList();
        return new EvaluationContext(outcome.elapsed(), usage, cost.apply(usage), observer)
                .withToolCalls(outcome.toolCalls());
    }
}
