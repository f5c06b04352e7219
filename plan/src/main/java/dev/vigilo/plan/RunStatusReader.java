package dev.vigilo.plan;

import dev.vigilo.common.errors.NotFoundException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/** Reads a run's status from the control database (no object-store reads). Thread-safe. */
public final class RunStatusReader {
    private final Jdbi jdbi;

    public RunStatusReader(Jdbi jdbi) {
        this.jdbi = Objects.requireNonNull(jdbi, "jdbi");
    }

    /**
     * The live view behind {@code vigilo run watch}: reads the status every {@code interval}, passes each reading to
     * {@code listener}, and returns the last one once the plan status is {@code ready} or {@code rejected}.
     *
     * @throws NotFoundException when no run has this id
     * @throws InterruptedException when the calling thread is interrupted (Ctrl-C)
     */
    public RunStatus watch(UUID runId, java.time.Duration interval, java.util.function.Consumer<RunStatus> listener)
            throws InterruptedException {
        Objects.requireNonNull(interval, "interval");
        Objects.requireNonNull(listener, "listener");
        while (true) {
            RunStatus s = status(runId);
            listener.accept(s);
            if (s.creationProgress().planStatus().isFinal()) {
                return s;
            }
            Thread.sleep(interval.toMillis());
        }
    }

    /** The status, or null when no run has this id (for logs and watch loops). */
    public RunStatus statusOrNull(UUID runId) {
        try {
            return status(runId);
        } catch (NotFoundException e) {
            return null;
        }
    }

    /**
     * Whether execution of the run was requested ({@code run create} without {@code --prepare-only}, or repeated
     * without it): a run still {@code creating} with a ready plan is then waiting for admission, not held.
     *
     * @throws NotFoundException when no run has this id
     */
    public boolean executionRequested(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        return jdbi.withHandle(h -> h.createQuery("SELECT execution_requested FROM run_plans WHERE run_id = :r")
                        .bind("r", runId)
                        .mapTo(Boolean.class)
                        .findOne())
                .orElseThrow(() -> PlanErrors.notFound(runId));
    }

    /** @throws NotFoundException when no run has this id */
    public RunStatus status(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        return jdbi.inTransaction(h -> {
            Optional<Map<String, Object>> row = h.createQuery("SELECT r.status, r.dispatchable, p.plan_status,"
                            + " p.plan_chunk_cursor, p.expected_chunks, p.rejection, " + CreationLease.COLUMNS
                            + " FROM runs r JOIN run_plans p USING (run_id) WHERE r.run_id = :r")
                    .bind("r", runId)
                    .mapToMap()
                    .findOne();
            if (row.isEmpty()) {
                throw PlanErrors.notFound(runId);
            }
            Map<String, Object> m = row.get();
            List<RunStatus.Shard> shards = ShardRows.read(h, runId);
            return new RunStatus(
                    runId,
                    RunState.fromSpelling((String) m.get("status")),
                    Boolean.TRUE.equals(m.get("dispatchable")),
                    new RunStatus.CreationProgress(
                            PlanStatus.fromSpelling((String) m.get("plan_status")),
                            ((Number) m.get("plan_chunk_cursor")).longValue()),
                    CreationLease.held(m),
                    ((Number) m.get("expected_chunks")).longValue(),
                    shards,
                    Optional.ofNullable((String) m.get("rejection")));
        });
    }
}
