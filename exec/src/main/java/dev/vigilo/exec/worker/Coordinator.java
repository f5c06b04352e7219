package dev.vigilo.exec.worker;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.Outages;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.placement.ShardRoutes;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.settlement.Settlement;
import dev.vigilo.storage.StorageConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordination a worker does between claims (docs/execution.md, "Decisions"): resumes requested admissions whose
 * creator is gone, one candidate at a time, deferring failed candidates with backoff so the next can proceed; fails
 * chunks whose attempts ran out; settles runs whose chunks all ended. No election: admission is guarded by the
 * creation lease, settlement by the run row lock and its status.
 *
 * <p>A round's failures are retried at the next round; those of settlement and of the round's reads that are outages
 * ({@link Outages}) are logged at debug level only, since the worker's claiming thread and heartbeat report an outage
 * once when it begins and when it ends. A deferred admission is logged at each deferral (at most every 5 minutes).
 *
 * <p>Called from the worker's claiming thread only; {@link #settleSoon} from any thread.
 */
final class Coordinator {
    private static final Logger LOG = LoggerFactory.getLogger(Coordinator.class);
    private static final int CANDIDATES = 16;

    private final Placements placements;
    private final Admission admission;
    private final Settlement settlement;
    private final Worker.Listener listener;
    private final Map<UUID, Deferral> deferred = new HashMap<>();
    private final Set<UUID> settleSoon = ConcurrentHashMap.newKeySet();
    private final AtomicLong admissions = new AtomicLong();
    private final AtomicLong settlements = new AtomicLong();

    private record Deferral(long untilNanos, int failures) {}

    Coordinator(Placements placements, StorageConfig storage, Duration creationLease, Worker.Listener listener) {
        this.placements = placements;
        this.admission = new Admission(placements, storage, creationLease);
        this.settlement = new Settlement(placements);
        this.listener = listener;
    }

    long admissions() {
        return admissions.get();
    }

    long settlements() {
        return settlements.get();
    }

    /** Asks for a settlement check of {@code runId} at the next coordination (a chunk of it just ended). */
    void settleSoon(UUID runId) {
        settleSoon.add(runId);
    }

    /** Whether a chunk ended since the last round, so a settlement check is due. */
    boolean settlementRequested() {
        return !settleSoon.isEmpty();
    }

    /** One round: admissions to resume, exhausted chunks, settlements. Failures are logged and retried later. */
    void coordinate() {
        resumeAdmissions();
        List<UUID> runs;
        try {
            runs = ShardRoutes.dispatchable(placements.control());
        } catch (RuntimeException e) {
            warn(e, "coordination cannot read runs: {}", e.getMessage());
            return;
        }
        failExhausted(runs);
        List<UUID> check = new ArrayList<>(runs);
        settleSoon.clear();
        for (UUID run : check) {
            try {
                long t0 = System.nanoTime();
                Settlement.Result r = settlement.settleIfComplete(run);
                if (r.outcome() == Settlement.Outcome.SETTLED || r.outcome() == Settlement.Outcome.FAILED) {
                    settlements.incrementAndGet();
                    listener.runSettled(run, r.status().spelling(), Duration.ofNanos(System.nanoTime() - t0));
                }
            } catch (RuntimeException e) {
                warn(e, "settlement of run {} failed, retried later: {}", run, e.getMessage());
            }
        }
    }

    private void failExhausted(List<UUID> runs) {
        for (String alias : placements.aliases()) {
            try {
                int n = LocalTransactions.inTransaction(
                        placements.jdbi(alias),
                        "failing exhausted chunks in \"" + alias + "\"",
                        h -> ChunkTables.failExhausted(h, runs));
                if (n > 0) {
                    LOG.warn(
                            "{} chunk(s) in execution database \"{}\" gave up after {} attempts",
                            n,
                            alias,
                            ChunkTables.MAX_ATTEMPTS);
                }
            } catch (RuntimeException e) {
                warn(e, "cannot check for exhausted chunks in \"{}\": {}", alias, e.getMessage());
            }
        }
    }

    private void resumeAdmissions() {
        List<UUID> candidates;
        try {
            candidates = ShardRoutes.admissionCandidates(placements.control(), CANDIDATES);
        } catch (RuntimeException e) {
            warn(e, "coordination cannot read admission candidates: {}", e.getMessage());
            return;
        }
        long now = System.nanoTime();
        for (UUID run : candidates) {
            Deferral d = deferred.get(run);
            if (d != null && now - d.untilNanos() < 0) {
                continue;
            }
            try {
                Admission.Result r = admission.admit(run);
                deferred.remove(run);
                if (r.outcome() == Admission.Outcome.ACTIVATED) {
                    admissions.incrementAndGet();
                    LOG.info("resumed admission of run {}: {} chunks", run, r.chunks());
                }
            } catch (ConflictException e) {
                // Another process is admitting it right now; look again later.
                defer(run, d, Duration.ofSeconds(10));
            } catch (RuntimeException e) {
                LOG.warn("admission of run {} failed, deferred: {}", run, e.getMessage());
                int failures = d == null ? 1 : d.failures() + 1;
                defer(run, new Deferral(0, failures), Duration.ofSeconds(Math.min(300, 5L << Math.min(6, failures))));
            }
        }
    }

    /** A warning, or a debug line when {@code e} is an outage (reported once elsewhere). */
    private static void warn(RuntimeException e, String format, Object... args) {
        if (Outages.classify(e).isPresent()) {
            LOG.debug(format, args);
        } else {
            LOG.warn(format, args);
        }
    }

    private void defer(UUID run, Deferral previous, Duration wait) {
        int failures = previous == null ? 0 : previous.failures();
        deferred.put(run, new Deferral(System.nanoTime() + wait.toNanos(), failures));
    }
}
