package dev.vigilo.exec;

import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.plan.RunLifecycle;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control table {@code exec_worker_waits} (migration V12): what each worker waits for now, so that a run's status
 * can say "waiting for the store since ..." (docs/execution.md, "Outages"). A worker publishes its outages from one
 * thread of its own, never from the thread that waits: right after an outage begins or ends, and every
 * {@link #REFRESH} while one lasts, so a row stays fresh and a reader ignores rows older than {@link #FRESH}. When the
 * control database itself cannot be reached the publication is tried again at the next refresh; nothing waits for
 * it. Readers ({@link #forRun}) run in the caller's transaction.
 */
public final class WaitBoard implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WaitBoard.class);
    /** How often a worker refreshes its rows while it waits. */
    static final Duration REFRESH = Duration.ofSeconds(15);
    /** Rows not refreshed for this long are a stopped worker's and are not shown. */
    static final Duration FRESH = Duration.ofSeconds(60);

    private final Jdbi control;
    private final UUID worker;
    private final Supplier<List<OutageWaits.Current>> source;
    private final ScheduledExecutorService thread;
    private final AtomicBoolean dirty = new AtomicBoolean();
    private volatile boolean published;

    /**
     * @param source the worker's outages now ({@link OutageWaits#current})
     */
    public WaitBoard(Jdbi control, UUID worker, Supplier<List<OutageWaits.Current>> source) {
        this.control = Objects.requireNonNull(control, "control");
        this.worker = Objects.requireNonNull(worker, "worker");
        this.source = Objects.requireNonNull(source, "source");
        this.thread = Executors.newSingleThreadScheduledExecutor(Threads.daemonFactory("wait-board"));
        long every = REFRESH.toMillis();
        thread.scheduleWithFixedDelay(this::refresh, every, every, TimeUnit.MILLISECONDS);
    }

    /** An outage began or ended: publish soon, on the board's thread. */
    public void changed() {
        dirty.set(true);
        try {
            thread.execute(this::publish);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // The worker is stopping; close() clears the rows.
        }
    }

    private void refresh() {
        if (published || dirty.get()) {
            publish();
        }
    }

    private void publish() {
        dirty.set(false);
        List<OutageWaits.Current> now = source.get();
        if (now.isEmpty() && !published) {
            return;
        }
        try {
            LocalTransactions.inTransaction(control, "publishing what worker " + worker + " waits for", h -> {
                replace(h, worker, now);
                return null;
            });
            published = !now.isEmpty();
        } catch (RuntimeException e) {
            dirty.set(true); // tried again at the next refresh
            LOG.debug("cannot publish what this worker waits for: {}", e.getMessage());
        }
    }

    /** Replaces {@code worker}'s rows with {@code now}, and deletes rows of any worker unrefreshed for an hour. */
    static void replace(Handle h, UUID worker, List<OutageWaits.Current> now) {
        h.createUpdate("DELETE FROM exec_worker_waits WHERE worker_id = :w OR updated_at < now() - interval '1 hour'")
                .bind("w", worker)
                .execute();
        for (OutageWaits.Current c : now) {
            h.createUpdate("INSERT INTO exec_worker_waits (worker_id, service, target, since, last_error)"
                            + " VALUES (:w, :s, :t, :since, :e)")
                    .bind("w", worker)
                    .bind("s", c.service().wire())
                    .bind("t", c.target())
                    .bind("since", Timestamp.from(c.since()))
                    .bind("e", c.error())
                    .execute();
        }
    }

    /**
     * What live workers wait for that run {@code runId} needs: its store (the run's storage binding) and the execution
     * databases of its routes; one entry per service and target, with the earliest start, the number of workers and
     * the latest error. Empty for a run that is not pending or running.
     */
    public static List<ExecutionStatus.Wait> forRun(Handle h, UUID runId) {
        return h.createQuery(
                        "SELECT w.service, w.target, min(w.since) AS since, count(DISTINCT w.worker_id) AS workers,"
                                + " (array_agg(w.last_error ORDER BY w.updated_at DESC))[1] AS error"
                                + " FROM exec_worker_waits w JOIN runs r ON r.run_id = :r"
                                + " WHERE " + RunLifecycle.executing("r.status")
                                + " AND w.updated_at > now() - make_interval(secs => :fresh)"
                                + " AND ((w.service = 'store' AND w.target ="
                                + " (SELECT p.storage_binding FROM run_plans p WHERE p.run_id = :r))"
                                + " OR (w.service = 'database' AND w.target IN"
                                + " (SELECT s.placement FROM exec_shard_routes s WHERE s.run_id = :r)))"
                                + " GROUP BY w.service, w.target ORDER BY since, w.service, w.target")
                .bind("r", runId)
                .bind("fresh", (double) FRESH.toSeconds())
                .map((rs, ctx) -> new ExecutionStatus.Wait(
                        Service.ofWire(rs.getString("service")),
                        rs.getString("target"),
                        rs.getTimestamp("since").toInstant(),
                        rs.getInt("workers"),
                        rs.getString("error")))
                .list();
    }

    /** Stops publishing and deletes this worker's rows (best effort: an unreachable database keeps them a minute). */
    @Override
    public void close() {
        thread.shutdownNow();
        try {
            if (!thread.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.debug("the wait board's thread did not stop within 5 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!published) {
            return;
        }
        try {
            LocalTransactions.inTransaction(control, "clearing what worker " + worker + " waits for", h -> {
                replace(h, worker, List.of());
                return null;
            });
        } catch (RuntimeException e) {
            LOG.debug("cannot clear what this worker waits for: {}", e.getMessage());
        }
    }
}
