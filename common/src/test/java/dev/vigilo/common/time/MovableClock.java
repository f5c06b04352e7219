package dev.vigilo.common.time;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock that stands still until a test moves it, so what depends on time (lease expiry) is tested without waiting
 * for it. For code that takes a {@link Clock}. Thread-safe.
 */
public final class MovableClock extends Clock {
    private volatile long millis;

    public MovableClock(long epochMillis) {
        this.millis = epochMillis;
    }

    /** Sets the time to {@code epochMillis}. */
    public void set(long epochMillis) {
        millis = epochMillis;
    }

    /** Moves the time on by {@code d}. */
    public synchronized void advance(Duration d) {
        millis += d.toMillis();
    }

    @Override
    public long millis() {
        return millis;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis);
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("a movable test clock is always UTC");
    }
}
