package dev.vigilo.agent;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One attempt of an agent call.
 *
 * @param number   1-based attempt number
 * @param started  wall-clock start
 * @param duration how long the attempt ran (the wait before the next attempt is not included)
 * @param error    why the attempt failed; empty when it produced the output
 * @param usage    the tokens the endpoint reported for each of this attempt's model calls, in order: one for a
 *     plain http agent, one per turn for an agent with tools (a failed attempt whose answers reported usage, e.g.
 *     one the agent could not use, has them too: their tokens were paid for); empty for command agents and answers
 *     without {@code usage}
 */
public record AgentAttempt(
        int number, Instant started, Duration duration, Optional<AgentError> error, List<TokenUsage> usage) {
    public AgentAttempt {
        if (number < 1) {
            throw new IllegalArgumentException("number must be >= 1, got " + number);
        }
        Objects.requireNonNull(started, "started");
        Objects.requireNonNull(duration, "duration");
        Objects.requireNonNull(error, "error");
        usage = List.copyOf(usage);
    }

    /** An attempt without usage. */
    public AgentAttempt(int number, Instant started, Duration duration, Optional<AgentError> error) {
        this(number, started, duration, error, List.of());
    }
}
