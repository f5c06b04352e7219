package dev.vigilo.common.retry;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ErrorKind;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The one retry utility: runs an action up to {@code maxAttempts} times, sleeping with exponential backoff and full
 * jitter between attempts, and retries only the failures its predicate accepts (by default
 * {@link ErrorKind#UNAVAILABLE}, the kind that says "retrying later may help"). Immutable and thread-safe.
 *
 * <p>An interrupt while sleeping stops the retries with a {@link CancelledException}; the last failure is attached
 * as suppressed. When attempts run out, the last failure is rethrown unchanged, so its kind and message reach the
 * caller.
 *
 * @param maxAttempts    attempts in all, at least 1
 * @param initialBackoff upper bound of the first sleep
 * @param maxBackoff     upper bound of every sleep
 * @param retryable      which failures are worth another attempt
 */
public record RetryPolicy(
        int maxAttempts, Duration initialBackoff, Duration maxBackoff, Predicate<Throwable> retryable) {

    /** Failures of kind {@link ErrorKind#UNAVAILABLE}. */
    public static final Predicate<Throwable> UNAVAILABLE =
            e -> e instanceof VigiloException v && v.kind() == ErrorKind.UNAVAILABLE;

    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
        Objects.requireNonNull(initialBackoff, "initialBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        Objects.requireNonNull(retryable, "retryable");
        if (initialBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("need 0 <= initialBackoff <= maxBackoff");
        }
    }

    /** A policy retrying {@link #UNAVAILABLE} failures. */
    public static RetryPolicy of(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, UNAVAILABLE);
    }

    /** The same policy retrying the failures {@code predicate} accepts instead. */
    public RetryPolicy retrying(Predicate<Throwable> predicate) {
        return new RetryPolicy(maxAttempts, initialBackoff, maxBackoff, predicate);
    }

    /** An action that may fail with any runtime exception. */
    @FunctionalInterface
    public interface Action<T> {
        T run(int attempt);
    }

    /**
     * Runs {@code action} (attempt numbers start at 1) until it returns, fails with a failure this policy does not
     * retry, or runs out of attempts.
     */
    public <T> T run(Action<T> action) {
        return run(action, () -> maxBackoff);
    }

    /**
     * As {@link #run(Action)}, never sleeping longer than {@code sleepLimit} says before an attempt (e.g. the time
     * left to a deadline, which the action then checks itself).
     */
    public <T> T run(Action<T> action, Supplier<Duration> sleepLimit) {
        Objects.requireNonNull(sleepLimit, "sleepLimit");
        RuntimeException last = null;
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            if (attempt > 1) {
                sleepBefore(attempt, last, sleepLimit.get());
            }
            try {
                return action.run(attempt);
            } catch (RuntimeException e) {
                if (!retryable.test(e) || attempt == maxAttempts) {
                    throw e;
                }
                last = e;
            }
        }
        throw new IllegalStateException("unreachable: maxAttempts >= 1");
    }

    /** The upper bound of the sleep before {@code attempt} (2, 3, ...): doubling from initialBackoff, capped. */
    public Duration backoffBound(int attempt) {
        long bound = initialBackoff.toNanos();
        for (int i = 2; i < attempt && bound < maxBackoff.toNanos(); i++) {
            bound = Math.min(maxBackoff.toNanos(), bound * 2);
        }
        return Duration.ofNanos(Math.min(bound, maxBackoff.toNanos()));
    }

    private void sleepBefore(int attempt, RuntimeException last, Duration limit) {
        long bound = backoffBound(attempt).toNanos();
        long nanos = bound == 0 ? 0 : ThreadLocalRandom.current().nextLong(bound + 1);
        nanos = Math.max(0, Math.min(nanos, limit.toNanos()));
        try {
            Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            CancelledException cancelled =
                    new CancelledException("interrupted while waiting to retry after: " + last.getMessage());
            cancelled.addSuppressed(last);
            throw cancelled;
        }
    }

    /** Wraps a non-Vigilo failure as {@link UnavailableException} naming the service, keeping the cause. */
    public static UnavailableException unavailable(String service, Throwable cause) {
        return new UnavailableException(service + " failed: " + cause.getMessage(), cause);
    }
}
