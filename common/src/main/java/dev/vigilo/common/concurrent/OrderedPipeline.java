package dev.vigilo.common.concurrent;

import dev.vigilo.common.errors.CancelledException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * The one ordered parallel pipeline: independent tasks (decode a chunk, validate a batch) run on a small pool of
 * daemon threads ({@link Threads}) while one thread submits them and takes their results back in submission order.
 * At most {@code maxTasks} tasks and about {@code maxBytes} of their input (always at least one task) are in flight,
 * which bounds the memory of their buffers.
 *
 * <p>A task's failure is rethrown where its result would have been taken, so the first failure in submission order
 * wins: a {@link RuntimeException} or {@link Error} unchanged, an {@link IOException} as itself from {@link #take}
 * (as an {@link UncheckedIOException} from the consuming methods), another checked exception wrapped in an
 * {@link IllegalStateException}. An interrupt of the taking thread becomes a {@link CancelledException} with the
 * given message. Not thread-safe: one thread submits and takes; {@link #close} cancels what is in flight and stops the
 * threads.
 *
 * @param <T> a task's result
 */
public final class OrderedPipeline<T> implements AutoCloseable {
    private record Pending<T>(Future<T> future, long bytes) {}

    private final ExecutorService pool;
    private final int maxTasks;
    private final long maxBytes;
    private final String cancelled;
    private final ArrayDeque<Pending<T>> pending = new ArrayDeque<>();
    private long bytesInFlight;

    /**
     * @param role      the threads' role ({@code vigilo-<role>-<n>})
     * @param threads   worker threads, at least 1
     * @param maxTasks  most tasks submitted and not yet taken, at least 1
     * @param maxBytes  most input bytes submitted and not yet taken (one larger task is still admitted)
     * @param cancelled the message of the {@link CancelledException} when the taking thread is interrupted
     */
    public OrderedPipeline(String role, int threads, int maxTasks, long maxBytes, String cancelled) {
        if (threads < 1 || maxTasks < 1) {
            throw new IllegalArgumentException("need threads >= 1 and maxTasks >= 1, got " + threads + ", " + maxTasks);
        }
        this.maxTasks = maxTasks;
        this.maxBytes = maxBytes;
        this.cancelled = Objects.requireNonNull(cancelled, "cancelled");
        this.pool = Executors.newFixedThreadPool(threads, Threads.daemonFactory(role));
    }

    /** The machine's processors, but at least 1 and at most {@code max}: a pool size for CPU-bound tasks. */
    public static int processorsUpTo(int max) {
        return Math.max(1, Math.min(max, Runtime.getRuntime().availableProcessors()));
    }

    /** Whether {@code maxTasks} tasks are in flight (then take one before submitting another). */
    public boolean full() {
        return pending.size() >= maxTasks;
    }

    /** Whether no task is in flight. */
    public boolean isEmpty() {
        return pending.isEmpty();
    }

    /** Starts {@code task}; the caller keeps to the window ({@link #full}). */
    public void submit(Callable<T> task) {
        submit(task, 0);
    }

    /** Starts {@code task} of {@code bytes} input; the caller keeps to the window ({@link #full}, {@link #roomFor}). */
    public void submit(Callable<T> task, long bytes) {
        pending.addLast(new Pending<>(pool.submit(task), bytes));
        bytesInFlight += bytes;
    }

    /** Whether a task of {@code bytes} input fits the window now (an empty window admits any task). */
    public boolean roomFor(long bytes) {
        return pending.isEmpty() || (pending.size() < maxTasks && bytesInFlight + bytes <= maxBytes);
    }

    /** Starts {@code task} of {@code bytes} input, first handing the oldest results to {@code consumer} for room. */
    public void submit(Callable<T> task, long bytes, Consumer<? super T> consumer) {
        while (!roomFor(bytes)) {
            consumer.accept(takeUnchecked());
        }
        submit(task, bytes);
    }

    /** Hands every result still in flight to {@code consumer}, in submission order. */
    public void finish(Consumer<? super T> consumer) {
        while (!pending.isEmpty()) {
            consumer.accept(takeUnchecked());
        }
    }

    /**
     * Waits for the oldest task and returns its result, rethrowing its failure (see the class javadoc).
     *
     * @throws IllegalStateException when no task is in flight
     */
    public T take() throws IOException {
        Pending<T> oldest = pending.pollFirst();
        if (oldest == null) {
            throw new IllegalStateException("no task in flight");
        }
        bytesInFlight -= oldest.bytes();
        try {
            return oldest.future().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancelledException(cancelled, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw Futures.unwrap(e);
        }
    }

    private T takeUnchecked() {
        try {
            return take();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        for (Pending<T> p : pending) {
            p.future().cancel(true);
        }
        pending.clear();
        pool.shutdownNow();
    }
}
