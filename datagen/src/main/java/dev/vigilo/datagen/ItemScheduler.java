package dev.vigilo.datagen;

import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.fleet.BudgetReachedException;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Runs items on a fixed pool of worker threads, at most {@code workers} at once, until every item
 * and every item they spawn has run.
 *
 * <p>Threads: the thread calling {@link #runAll} is the coordinator. It submits items, takes each
 * finished one from a {@link CompletionService}, submits what it spawned and then calls the {@link
 * Listener}, so listener calls never overlap and never come from a worker. A worker owns an item
 * from submission until its task returns; the future hands the item (and its spawn) back to the
 * coordinator with a happens-before edge, so items need no locks.
 *
 * <p>The first task that throws stops the run: queued items are dropped, running workers are
 * interrupted (and awaited, bounded), and the exception is rethrown on the coordinator. A task that throws {@link
 * BudgetReachedException} (the experiment's budget refused a model call) stops it gently instead: no more items are
 * taken, the running ones are let finish, then the refusal is rethrown.
 */
final class ItemScheduler {
    /** How long a stopping run waits for interrupted workers to return. */
    private static final long STOP_WAIT_SECONDS = 30;

    /** Runs one item on a worker; returns the items it spawned (to be run too). */
    @FunctionalInterface
    interface Task<T> {
        List<T> run(T item) throws InterruptedException;
    }

    /** Told on the coordinator thread that an item's task returned, after its spawn was submitted. */
    @FunctionalInterface
    interface Listener<T> {
        void finished(T item, List<T> spawned);
    }

    /**
     * Supplies more items while the run goes on (called on the coordinator thread whenever fewer than twice {@code
     * workers} items are pending, and once more with 0 pending before the run ends); an empty answer with nothing
     * pending ends the run.
     */
    @FunctionalInterface
    interface Source<T> {
        List<T> more(int pending);

        /**
         * Whether the source holds items back that it will hand out later (datagen's dedup steps park items until
         * their turn): with nothing pending, the run then waits and asks again instead of ending.
         */
        default boolean holding() {
            return false;
        }
    }

    /** How long a run whose only items are held back by its source waits before asking it again (as long as a run
     * with nothing to claim waits between looks at the other runs' buckets: each ask may scan them). */
    private static final long HOLD_POLL_MILLIS = 500;

    private record Done<T>(T item, List<T> spawned) {}

    private ItemScheduler() {}

    /**
     * Runs {@code initial} and everything they spawn with {@code workers} threads; returns when all
     * have run.
     *
     * @throws RuntimeException the first exception a task threw (as thrown)
     * @throws CancelledException the coordinator (or a worker, outside a stop) was interrupted
     */
    static <T> void runAll(int workers, Collection<T> initial, Task<T> task, Listener<T> listener) {
        runAll(workers, initial, task, listener, pending -> List.of());
    }

    /** As {@link #runAll(int, Collection, Task, Listener)}, taking more items from {@code source} as workers free up. */
    static <T> void runAll(int workers, Collection<T> initial, Task<T> task, Listener<T> listener, Source<T> source) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1, got " + workers);
        }
        ExecutorService pool = Executors.newFixedThreadPool(workers, Threads.daemonFactory("datagen-worker"));
        CompletionService<Done<T>> done = new ExecutorCompletionService<>(pool);
        int pending = 0; // submitted and not yet taken; touched by the coordinator only
        try {
            for (T item : initial) {
                done.submit(() -> new Done<>(item, task.run(item)));
                pending++;
            }
            // A budget that is reached stops the run gently: no new items; the running ones end (their calls are
            // refused or answered, what they completed is checkpointed), then the refusal is thrown.
            BudgetReachedException stopping = null;
            while (true) {
                if (stopping == null && pending < 2 * workers) {
                    for (T item : source.more(pending)) {
                        done.submit(() -> new Done<>(item, task.run(item)));
                        pending++;
                    }
                }
                if (pending == 0) {
                    if (stopping != null) {
                        throw stopping;
                    }
                    if (!source.holding()) {
                        break;
                    }
                    Thread.sleep(HOLD_POLL_MILLIS);
                    continue;
                }
                Done<T> d;
                try {
                    d = result(done.take());
                } catch (BudgetReachedException e) {
                    pending--;
                    if (stopping == null) {
                        stopping = e;
                    }
                    continue;
                }
                pending--;
                for (T child : d.spawned()) {
                    done.submit(() -> new Done<>(child, task.run(child)));
                    pending++;
                }
                listener.finished(d.item(), d.spawned());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancelledException("interrupted", e);
        } finally {
            stop(pool);
        }
    }

    private static <T> Done<T> result(Future<Done<T>> f) throws InterruptedException {
        try {
            return f.get();
        } catch (ExecutionException e) {
            // Only InterruptedException is left as a checked cause: workers are interrupted only by stop(), so
            // this is unexpected; the run stops rather than leave the item silently unfinished.
            throw Futures.unwrap(e, cause -> new CancelledException("interrupted", cause));
        }
    }

    private static void stop(ExecutorService pool) {
        pool.shutdownNow();
        try {
            pool.awaitTermination(STOP_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
