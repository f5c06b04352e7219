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
 */
public record AgentAttempt(int number, Instant started, Duration duration, Optional<AgentError> error) {
    public AgentAttempt {
        if (number < 1) {
            throw new IllegalArgumentException("number must be >= 1, got " + number);
        }
        Objects.requireNonNull(started, "started");
        Objects.requireNonNull(duration, "duration");
        Objects.requireNonNull(error, "error");
    }
}
