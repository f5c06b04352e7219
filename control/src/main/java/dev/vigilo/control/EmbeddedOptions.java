package dev.vigilo.control;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Objects;

/**
 * Tuning of the embedded server's lifecycle.
 *
 * @param idleGrace    how long the server keeps running after its last client has gone, so that a quick succession
 *                     of commands does not restart it each time
 * @param startTimeout how long a client waits for a server host to come up (includes unpacking the binaries on
 *                     first use)
 */
record EmbeddedOptions(Duration idleGrace, Duration startTimeout) {

    /** System property overriding {@link #idleGrace()}: an ISO-8601 duration ({@code PT1S}) or milliseconds. */
    static final String IDLE_GRACE_PROPERTY = "vigilo.control.embedded.idle-grace";
    /** System property overriding {@link #startTimeout()}: an ISO-8601 duration or milliseconds. */
    static final String START_TIMEOUT_PROPERTY = "vigilo.control.embedded.start-timeout";

    static final Duration DEFAULT_IDLE_GRACE = Duration.ofSeconds(10);
    static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(60);

    EmbeddedOptions {
        Objects.requireNonNull(idleGrace, "idleGrace");
        Objects.requireNonNull(startTimeout, "startTimeout");
        if (idleGrace.isNegative() || startTimeout.isNegative() || startTimeout.isZero()) {
            throw new IllegalArgumentException(
                    "idleGrace must be >= 0 and startTimeout > 0: " + idleGrace + ", " + startTimeout);
        }
    }

    static EmbeddedOptions fromSystemProperties() {
        return new EmbeddedOptions(
                duration(IDLE_GRACE_PROPERTY, DEFAULT_IDLE_GRACE),
                duration(START_TIMEOUT_PROPERTY, DEFAULT_START_TIMEOUT));
    }

    static Duration parseDuration(String text) {
        String trimmed = text.trim();
        try {
            return trimmed.chars().allMatch(Character::isDigit) && !trimmed.isEmpty()
                    ? Duration.ofMillis(Long.parseLong(trimmed))
                    : Duration.parse(trimmed);
        } catch (DateTimeParseException | NumberFormatException e) {
            throw new IllegalArgumentException(
                    "not a duration (ISO-8601 like PT10S, or milliseconds): '" + text + "'", e);
        }
    }

    private static Duration duration(String property, Duration fallback) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            return fallback;
        }
        try {
            return parseDuration(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("system property " + property + ": " + e.getMessage(), e);
        }
    }
}
