package dev.vigilo.storage;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.UnavailableException;
import java.time.Duration;
import java.util.Objects;

/**
 * A point in monotonic time by which a call must finish. Deadlines are minted before the work they bound
 * (for example before a lease check) and passed down, so nested calls share one budget instead of each
 * restarting its own timeout.
 *
 * @param nanoTime the {@link System#nanoTime()} value at which the deadline expires
 */
public record Deadline(long nanoTime) {

    /** A deadline {@code timeout} from now. */
    public static Deadline after(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return new Deadline(System.nanoTime() + timeout.toNanos());
    }

    /** Time left, never negative. */
    public Duration remaining() {
        long left = nanoTime - System.nanoTime();
        return Duration.ofNanos(Math.max(0, left));
    }

    public boolean expired() {
        return nanoTime - System.nanoTime() <= 0;
    }

    /**
     * Throws when the deadline has passed or the calling thread was interrupted; call it between steps of
     * long operations.
     *
     * @param what names the operation for the error message
     * @throws UnavailableException   when the deadline has passed
     * @throws CancelledException when the thread is interrupted (the interrupt flag stays set)
     */
    public void check(String what) {
        if (Thread.currentThread().isInterrupted()) {
            throw new CancelledException(what + " was cancelled");
        }
        if (expired()) {
            throw new UnavailableException(what + " ran past its deadline");
        }
    }
}
