package dev.vigilo.datagen;

import java.util.function.LongSupplier;

/**
 * A token bucket refilled continuously at {@code perMinute / 60} tokens a second, holding at most one second's worth
 * (so no burst exceeds the per-second rate by more than that), shared by every thread that calls one endpoint.
 * {@link #reserve} takes tokens at once and says how long the caller must wait before using them: reservations are
 * served in call order and the balance may go negative (a large request waits for the refill), so the long-run rate
 * never exceeds the limit. {@link #adjust} corrects an estimate afterwards (tokens per minute are known only from
 * the answer's usage); {@link #pauseUntil} stops every reservation until a time (an endpoint's Retry-After).
 * Thread-safe.
 */
final class RateLimiter {
    private final double perNano;
    private final double capacity;
    private final LongSupplier clock;
    private double tokens;
    private long updated;
    private long pausedUntil;

    /** A limiter of {@code perMinute} tokens a minute on {@code clock} (nanoseconds, e.g. System::nanoTime). */
    RateLimiter(long perMinute, LongSupplier clock) {
        if (perMinute < 1) {
            throw new IllegalArgumentException("perMinute must be >= 1");
        }
        this.perNano = perMinute / 60e9;
        this.capacity = Math.max(1, perMinute / 60.0);
        this.clock = clock;
        this.updated = clock.getAsLong();
        this.tokens = capacity;
        this.pausedUntil = updated;
    }

    /** Takes {@code n} tokens; returns the nanoseconds to wait before using them (0: at once). */
    synchronized long reserve(long n) {
        long now = refill();
        long start = Math.max(now, pausedUntil);
        // Tokens refilled between now and the pause's end count for this reservation.
        double available = Math.min(capacity, tokens + (start - now) * perNano);
        double after = available - n;
        long wait = start - now + (after >= 0 ? 0 : (long) Math.ceil(-after / perNano));
        tokens = after - (start - now) * perNano;
        return wait;
    }

    /** Gives back ({@code delta < 0}) or takes ({@code delta > 0}) tokens after an estimate proved wrong. */
    synchronized void adjust(long delta) {
        refill();
        tokens = Math.min(capacity, tokens - delta);
    }

    /** No reservation may start before {@code nanoTime} (reservations made later wait for it too). */
    synchronized void pauseUntil(long nanoTime) {
        pausedUntil = Math.max(pausedUntil, nanoTime);
    }

    private long refill() {
        long now = clock.getAsLong();
        tokens = Math.min(capacity, tokens + (now - updated) * perNano);
        updated = now;
        return now;
    }

    /** Reserves {@code n} tokens and sleeps until they may be used. */
    void acquire(long n) throws InterruptedException {
        long wait = reserve(n);
        if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
    }
}
