package dev.vigilo.agent;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The result of one agent call on one case, after the retries of the agent's policy.
 *
 * <p>An outcome of type {@link AgentErrorType#CANCELLED} is not a result of the case: the worker was interrupted
 * (lease lost, shutdown) and must not record it as the case's error; the thread's interrupt status is set again when
 * it is returned.
 *
 * @param status   {@link Status#OK} with an output, or {@link Status#ERROR} with an error
 * @param output   the agent's answer (at most {@link Agent#MAX_OUTPUT_BYTES} of UTF-8); present iff status is OK
 * @param error    the last attempt's error; present iff status is ERROR
 * @param attempts every attempt made, in order (at least one)
 * @param elapsed  from the start of the first attempt to the end of the last, waits included
 * @param usage    token usage of the successful HTTP answer (with tools: of the last model call, which gave the
 *                 answer; every call's is on the {@link #attempts}); empty for command agents, errors and cached
 *                 answers
 * @param cached   whether the output is an earlier answer to the identical request ({@code agent.cache}), not sent
 * @param toolCalls the tool calls of the attempt that answered (an http agent's executed calls, a command agent's
 *                 {@code tool_call} events), in order; empty when there were none or the call errored
 */
public record AgentOutcome(
        Status status,
        Optional<String> output,
        Optional<AgentError> error,
        List<AgentAttempt> attempts,
        Duration elapsed,
        Optional<TokenUsage> usage,
        boolean cached,
        List<AgentToolCall> toolCalls) {

    /** Whether the agent answered. */
    public enum Status {
        /** The agent produced an output. */
        OK,
        /** Every attempt failed, or a failure was not worth retrying. */
        ERROR
    }

    public AgentOutcome {
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(output, "output");
        Objects.requireNonNull(error, "error");
        attempts = List.copyOf(attempts);
        Objects.requireNonNull(elapsed, "elapsed");
        Objects.requireNonNull(usage, "usage");
        toolCalls = List.copyOf(toolCalls);
        if ((status == Status.OK) != output.isPresent() || output.isPresent() == error.isPresent()) {
            throw new IllegalArgumentException("OK needs an output and no error, ERROR an error and no output");
        }
        if (attempts.isEmpty()) {
            throw new IllegalArgumentException("an outcome has at least one attempt");
        }
    }

    /** An outcome without tool calls. */
    public AgentOutcome(
            Status status,
            Optional<String> output,
            Optional<AgentError> error,
            List<AgentAttempt> attempts,
            Duration elapsed,
            Optional<TokenUsage> usage,
            boolean cached) {
        this(status, output, error, attempts, elapsed, usage, cached, List.of());
    }

    /** An outcome that was not answered from the cache. */
    public AgentOutcome(
            Status status,
            Optional<String> output,
            Optional<AgentError> error,
            List<AgentAttempt> attempts,
            Duration elapsed,
            Optional<TokenUsage> usage) {
        this(status, output, error, attempts, elapsed, usage, false);
    }

    /** Whether the call was cut short by an interrupt rather than answered or failed. */
    public boolean cancelled() {
        return error.map(e -> e.type() == AgentErrorType.CANCELLED).orElse(false);
    }
}
