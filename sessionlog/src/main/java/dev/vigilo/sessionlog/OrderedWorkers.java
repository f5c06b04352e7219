package dev.vigilo.sessionlog;

import dev.vigilo.common.errors.CancelledException;
import java.util.ArrayDeque;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs independent tasks (decoding and indexing one chunk each) on a few daemon threads while the caller takes
 * the results back in submission order; at most {@link #window()} tasks are in flight, which bounds the memory
 * of their buffers. Used by one reading thread; {@link #close} stops the threads.
 */
final class OrderedWorkers<T> implements AutoCloseable {
    /** Worker threads: the machine's processors (the reading thread does little while they work), at most 8. */
    static final int THREADS = Math.max(1, Math.min(8, Runtime.getRuntime().availableProcessors()));

    private final ExecutorService pool;
    private final ArrayDeque<Future<T>> inFlight = new ArrayDeque<>();
    private final int window;

    OrderedWorkers(int window) {
        this.window = window;
        this.pool = Executors.newFixedThreadPool(Math.min(THREADS, window), r -> {
            Thread t = new Thread(r, "sessionlog-reader");
            t.setDaemon(true);
            return t;
        });
    }

    int window() {
        return window;
    }

    boolean full() {
        return inFlight.size() >= window;
    }

    boolean isEmpty() {
        return inFlight.isEmpty();
    }

    void submit(Callable<T> task) {
        inFlight.add(pool.submit(task));
    }

    /** @return the result of the oldest task; its exception is rethrown as is (an I/O failure as IOException) */
    T take() throws java.io.IOException {
        Future<T> f = inFlight.poll();
        if (f == null) throw new IllegalStateException("no task in flight");
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancelledException("interrupted while reading the session log", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException r) throw r;
            if (c instanceof Error err) throw err;
            if (c instanceof java.io.IOException io) throw io;
            throw new IllegalStateException(c);
        }
    }

    @Override
    public void close() {
        for (Future<T> f : inFlight) f.cancel(true);
        inFlight.clear();
        pool.shutdownNow();
    }
}
