package dev.vigilo.dataset;

import dev.vigilo.common.errors.CancelledException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * Runs tasks on a small pool of threads and hands their results to one consumer in submission order, on the
 * submitting thread. At most {@code maxTasks} tasks and about {@code maxBytes} of input (at least one task) are in
 * flight, which bounds memory; a full window makes {@link #submit} consume the oldest results first. A task's
 * exception is rethrown, in order, where its result would have been consumed, so the first failure in submission
 * order wins. Not thread-safe: one thread submits and consumes.
 *
 * @param <R> a task's result
 */
final class OrderedWork<R> implements AutoCloseable {
    private record Pending<R>(Future<R> future, long bytes) {}

    private final ExecutorService pool;
    private final Consumer<R> consumer;
    private final int maxTasks;
    private final long maxBytes;
    private final Deque<Pending<R>> pending = new ArrayDeque<>();
    private long bytesInFlight;

    /**
     * @param name     the worker threads' name
     * @param threads  worker threads
     * @param maxTasks most tasks submitted and not yet consumed
     * @param maxBytes most input bytes submitted and not yet consumed (one larger task is still admitted)
     * @param consumer receives every result in submission order, on the submitting thread
     */
    OrderedWork(String name, int threads, int maxTasks, long maxBytes, Consumer<R> consumer) {
        this.consumer = Objects.requireNonNull(consumer, "consumer");
        this.maxTasks = maxTasks;
        this.maxBytes = maxBytes;
        this.pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    /** The number of worker threads an upload uses: one per core, so the submitting thread shares them. */
    static int defaultThreads() {
        return Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
    }

    /** Submits one task of {@code bytes} input; first consumes the oldest results while the window is full. */
    void submit(Callable<R> task, long bytes) {
        while (!pending.isEmpty() && (pending.size() >= maxTasks || bytesInFlight + bytes > maxBytes)) {
            consumeOldest();
        }
        pending.addLast(new Pending<>(pool.submit(task), bytes));
        bytesInFlight += bytes;
    }

    /** Consumes every result submitted so far. */
    void finish() {
        while (!pending.isEmpty()) {
            consumeOldest();
        }
    }

    private void consumeOldest() {
        Pending<R> oldest = pending.removeFirst();
        bytesInFlight -= oldest.bytes();
        R result;
        try {
            result = oldest.future().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancelledException("the upload was interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(e.getCause());
        }
        consumer.accept(result);
    }

    @Override
    public void close() {
        for (Pending<R> p : pending) {
            p.future().cancel(true);
        }
        pending.clear();
        pool.shutdownNow();
    }
}
