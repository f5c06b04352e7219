package dev.vigilo.llm;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/** The one reading of an HTTP {@code Retry-After} value: seconds (decimals allowed) or an HTTP date (RFC 1123). */
public final class RetryAfter {
    private RetryAfter() {}

    /**
     * The wait {@code value} asks for, counted from {@code now}: never negative (a date in the past is zero); empty
     * when it is neither a number of seconds nor an HTTP date. Not capped: each caller caps it with its own bound.
     */
    public static Optional<Duration> parse(String value, Instant now) {
        String v = value.strip();
        Duration d;
        try {
            double seconds = Double.parseDouble(v);
            if (Double.isNaN(seconds) || Double.isInfinite(seconds)) {
                return Optional.empty();
            }
            d = Duration.ofMillis(Math.round(Math.min(seconds, 1e12) * 1000));
        } catch (NumberFormatException e) {
            try {
                d = Duration.between(
                        now,
                        ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME)
                                .toInstant());
            } catch (DateTimeParseException x) {
                return Optional.empty();
            }
        }
        return Optional.of(d.isNegative() ? Duration.ZERO : d);
    }
}
