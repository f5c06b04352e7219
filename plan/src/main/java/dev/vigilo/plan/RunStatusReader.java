package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.NotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
            String plan = s.creationProgress().planStatus();
            if ("ready".equals(plan) || "rejected".equals(plan)) {
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

    /** @throws NotFoundException when no run has this id */
    public RunStatus status(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        return jdbi.inTransaction(h -> {
            Optional<Map<String, Object>> row = h.createQuery("SELECT r.status, r.dispatchable, p.plan_status,"
                            + " p.plan_chunk_cursor, p.expected_chunks, p.rejection FROM runs r JOIN run_plans p USING (run_id)"
                            + " WHERE r.run_id = :r")
                    .bind("r", runId)
                    .mapToMap()
                    .findOne();
            if (row.isEmpty()) {
                throw PlanErrors.notFound(runId);
            }
            Map<String, Object> m = row.get();
            List<RunStatus.Shard> shards = new ArrayList<>();
            for (Map<String, Object> s : h.createQuery("SELECT shard, cases, chunks, gate_counts FROM run_plan_shards"
                            + " WHERE run_id = :r ORDER BY shard")
                    .bind("r", runId)
                    .mapToMap()
                    .list()) {
                Map<String, Long> gates = new LinkedHashMap<>();
                try {
                    for (JsonNode pair : ProfileJson.MAPPER.readTree((String) s.get("gate_counts"))) {
                        gates.put(pair.get(0).asText(), pair.get(1).asLong());
                    }
                } catch (IOException e) {
                    throw PlanErrors.damaged(
                            runId, "the stored gate counts of a shard do not decode: " + e.getMessage(), e);
                }
                shards.add(new RunStatus.Shard(
                        ((Number) s.get("shard")).intValue(),
                        ((Number) s.get("cases")).longValue(),
                        ((Number) s.get("chunks")).longValue(),
                        gates));
            }
            return new RunStatus(
                    runId,
                    (String) m.get("status"),
                    Boolean.TRUE.equals(m.get("dispatchable")),
                    new RunStatus.CreationProgress(
                            (String) m.get("plan_status"), ((Number) m.get("plan_chunk_cursor")).longValue()),
                    ((Number) m.get("expected_chunks")).longValue(),
                    shards,
                    Optional.ofNullable((String) m.get("rejection")));
        });
    }
}
