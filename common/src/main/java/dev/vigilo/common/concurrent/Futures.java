package dev.vigilo.common.concurrent;

import dev.vigilo.common.errors.CancelledException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import java.util.function.Supplier;

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

    /**
     * Runs {@code work} on {@code pool} as a {@link CompletableFuture} whose cancellation interrupts the thread running
     * it (a plain {@code supplyAsync} future does not): blocking work (a process, a blocking call) that must stop when
     * its caller gives up. A pool that refuses the task (shut down) fails the future with its refusal.
     */
    public static <T> CompletableFuture<T> supplyInterruptibly(Executor pool, Supplier<T> work) {
        Objects.requireNonNull(work, "work");
        CompletableFuture<T> out = new CompletableFuture<>();
        FutureTask<T> task = new FutureTask<>(work::get) {
            @Override
            protected void done() {
                if (isCancelled()) {
                    out.cancel(false);
                    return;
                }
                try {
                    out.complete(get());
                } catch (ExecutionException e) {
                    out.completeExceptionally(e.getCause() == null ? e : e.getCause());
                } catch (InterruptedException e) {
                    // Not reached: done() runs once the task ended, so get() does not wait.
                    Thread.currentThread().interrupt();
                    out.completeExceptionally(e);
                }
            }
        };
        out.whenComplete((v, t) -> {
            if (out.isCancelled()) {
                task.cancel(true);
            }
        });
        try {
            pool.execute(task);
        } catch (RejectedExecutionException e) {
            out.completeExceptionally(e);
        }
        return out;
    }

    /** The failure a dependent stage saw, without the {@link CompletionException} wrapping it. */
    public static Throwable cause(Throwable t) {
        Throwable c = t;
        while (c instanceof CompletionException && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }
}
