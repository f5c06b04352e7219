package dev.vigilo.common.concurrent;

import dev.vigilo.common.errors.CancelledException;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * The one way to wait for a task that runs on another thread and take its outcome as if it had run on the caller's:
 * a task's {@link RuntimeException} or {@link Error} is rethrown unchanged (its kind and message reach the caller),
 * and an interrupt of the waiting thread becomes a {@link CancelledException} with the interrupt flag set again.
 * Stateless.
 */
public final class Futures {
    private Futures() {}

    /**
     * Waits for {@code future} and returns its result.
     *
     * @param cancelled the message of the {@link CancelledException} thrown when the wait is interrupted, saying what
     *     was cancelled (e.g. {@code "the upload was interrupted"})
     * @throws CancelledException when the waiting thread is interrupted (the task is not cancelled here: its owner
     *     stops its pool)
     */
    public static <T> T join(Future<T> future, String cancelled) {
        Objects.requireNonNull(cancelled, "cancelled");
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancelledException(cancelled, e);
        } catch (ExecutionException e) {
            throw unwrap(e);
        }
    }

    /**
     * The failure to rethrow for a task that failed: its {@link RuntimeException} unchanged, its {@link Error}
     * thrown from here, and a checked exception (which a Vigilo task throws only by a bug) wrapped in an
     * {@link IllegalStateException}. Use as {@code throw Futures.unwrap(e)}.
     */
    public static RuntimeException unwrap(ExecutionException e) {
        return unwrap(e, IllegalStateException::new);
    }

    /** As {@link #unwrap(ExecutionException)}, turning a checked cause into the exception {@code checked} makes. */
    public static RuntimeException unwrap(ExecutionException e, Function<Throwable, RuntimeException> checked) {
        Throwable cause = e.getCause();
        if (cause instanceof RuntimeException runtime) {
            return runtime;
        }
        if (cause instanceof Error error) {
            throw error;
        }
        return checked.apply(cause == null ? e : cause);
    }
}
