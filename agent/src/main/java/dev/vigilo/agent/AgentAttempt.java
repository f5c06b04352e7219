package dev.vigilo.agent;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One attempt of an agent call.
 *
 * @param number   1-based attempt number
 * @param started  wall-clock start
 * @param duration how long the attempt ran (the wait before the next attempt is not included)
 * @param error    why the attempt failed; empty when it produced the output
 * @param usage    the tokens the endpoint reported for this attempt's answer (http agents; a failed attempt whose
 *     answer reported usage, e.g. one the agent could not use, has it too: its tokens were paid for); empty for
 *     command agents and answers without {@code usage}
 */
public record AgentAttempt(
        int number, Instant started, Duration duration, Optional<AgentError> error, Optional<TokenUsage> usage) {
    public AgentAttempt {
        if (number < 1) {
            throw new IllegalArgumentException("number must be >= 1, got " + number);
        }
        Objects.requireNonNull(started, "started");
        Objects.requireNonNull(duration, "duration");
        Objects.requireNonNull(error, "error");
        Objects.requireNonNull(usage, "usage");
    }

    /** An attempt without usage. */
    public AgentAttempt(int number, Instant started, Duration duration, Optional<AgentError> error) {
        this(number, started, duration, error, Optional.empty());
    }
}
