package dev.vigilo.exec.record;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * The records of {@code vigilo run rerun-errors} (docs/execution.md, "Rerun errors"), with their SQL: on an execution
 * database, the chunk rows a rerun queues again (execution migration V6: {@code rerun_generation} and the previous
 * receipt's reference); on the control database, the rerun history {@code run_rerun_history} (migration V20), one row
 * per earlier settlement of a run, written in the reopening transaction and never changed.
 */
public final class RerunRecords {
    private static final ObjectMapper JSON = StrictJson.newMapper();

    private RerunRecords() {}

    /**
     * A chunk row a rerun concerns.
     *
     * @param state     done (with errored cases), failed, or queued (queued again by an interrupted reopening for
     *                  the same generation)
     * @param receipt   the receipt whose errored executions run again: a done row's own receipt, a queued row's
     *                  previous receipt; empty for a failed chunk, which runs again whole
     * @param lastError a failed chunk's last error
     */
    public record Candidate(ChunkSeed seed, String state, Optional<ObjectRef> receipt, Optional<String> lastError) {}

    /**
     * The run's chunk rows in {@code shards} a rerun for {@code generation} executes again, in chunk order: done rows
     * whose tallies count an errored case, failed rows, and rows already queued again for this generation.
     */
    public static List<Candidate> candidates(Handle h, UUID runId, List<Integer> shards, int generation) {
        return h.createQuery("SELECT " + SeedTables.SEED_COLUMNS + ", state, receipt_key, receipt_length,"
                        + " receipt_sha256, previous_receipt_key, previous_receipt_length, previous_receipt_sha256,"
                        + " last_error FROM exec_chunks WHERE run_id = :r AND shard = ANY(:s)"
                        + " AND ((state = 'done' AND (cases_errored > 0 OR 0 < ANY(gate_errored)))"
                        + " OR state = 'failed' OR (state = 'queued' AND rerun_generation = :g))"
                        + " ORDER BY chunk_index")
                .bind("r", runId)
                .bindArray("s", Integer.class, shards)
                .bind("g", generation)
                .map((rs, ctx) -> {
                    String state = rs.getString("state");
                    String prefix = "done".equals(state) ? "receipt_" : "previous_receipt_";
                    String key = rs.getString(prefix + "key");
                    Optional<ObjectRef> ref = key == null
                            ? Optional.empty()
                            : Optional.of(new ObjectRef(
                                    ObjectKey.of(key),
                                    rs.getLong(prefix + "length"),
                                    Sha256.parseHex(rs.getString(prefix + "sha256"))));
                    return new Candidate(
                            SeedTables.seed(rs),
                            state,
                            "failed".equals(state) ? Optional.empty() : ref,
                            Optional.ofNullable(rs.getString("last_error")));
                })
                .list();
    }

    /**
     * Queues the chunks {@code chunks} of the run again for settlement generation {@code generation}: a done row keeps
     * its receipt as the previous receipt, a failed row runs again whole; the tallies, usage and agreement go (the new
     * receipt's replace them at its completion), the attempts start again. A row already queued for this generation
     * is left as it is, so repeating an interrupted reopening changes nothing twice.
     *
     * @return the rows queued now
     */
    public static int requeue(Handle h, UUID runId, List<Long> chunks, int generation) {
        return h.createUpdate("UPDATE exec_chunks SET state = 'queued', rerun_generation = :g,"
                        + " previous_receipt_key = receipt_key, previous_receipt_length = receipt_length,"
                        + " previous_receipt_sha256 = receipt_sha256, receipt_key = NULL, receipt_length = NULL,"
                        + " receipt_sha256 = NULL, cases_executed = NULL, cases_errored = NULL, gate_passed = NULL,"
                        + " gate_failed = NULL, gate_errored = NULL, gate_epoch_passes = NULL, usage = NULL,"
                        + " agreement = NULL, attempts = 0, not_before = NULL, last_error = NULL, finished_at = NULL,"
                        + ChunkTables.PARTIAL_CLEARED
                        + " lease_owner = NULL, lease_expires_at = NULL"
                        + " WHERE run_id = :r AND chunk_index = ANY(:c) AND state IN ('done', 'failed')")
                .bind("r", runId)
                .bindArray("c", Long.class, chunks)
                .bind("g", generation)
                .execute();
    }

    /**
     * One earlier settlement of a run.
     *
     * @param generation    1 for the first settlement, then one more per rerun
     * @param status        settled or failed
     * @param gates         the gate table then: {@code [{"name", "planned", "passed", "failed", "errored", "decision"}]}
     * @param rerun         what the reopening queued again: {@code {"chunks", "cases", "by_type": {...}}}
     */
    public record Settled(
            int generation,
            String status,
            Optional<String> verdict,
            Optional<String> failureReason,
            Optional<Instant> finishedAt,
            Instant reopenedAt,
            JsonNode gates,
            JsonNode rerun) {}

    /** How many earlier settlements the run has (0 before its first rerun); its current generation is one more. */
    public static int settledGenerations(Handle h, UUID runId) {
        return h.createQuery("SELECT count(*) FROM run_rerun_history WHERE run_id = :r")
                .bind("r", runId)
                .mapTo(Integer.class)
                .one();
    }

    /**
     * Keeps the run's current settlement as generation {@code generation} (the reopening's transaction, with the run
     * row locked and still settled or failed): its status, verdict, failure reason and end time as the run row holds
     * them, {@code gates} and {@code rerun} as JSON.
     */
    public static void keep(Handle h, UUID runId, int generation, String gates, String rerun) {
        h.createUpdate("INSERT INTO run_rerun_history (run_id, generation, status, verdict, failure_reason,"
                        + " finished_at, gates, rerun) SELECT run_id, :g, status, verdict, failure_reason, finished_at,"
                        + " CAST(:gates AS jsonb), CAST(:rerun AS jsonb) FROM runs WHERE run_id = :r")
                .bind("r", runId)
                .bind("g", generation)
                .bind("gates", gates)
                .bind("rerun", rerun)
                .execute();
    }

    /** The run's earlier settlements, oldest first; empty for a run never rerun. */
    public static List<Settled> history(Handle h, UUID runId) {
        return h.createQuery("SELECT generation, status, verdict, failure_reason, finished_at, reopened_at, gates,"
                        + " rerun FROM run_rerun_history WHERE run_id = :r ORDER BY generation")
                .bind("r", runId)
                .map((rs, ctx) -> new Settled(
                        rs.getInt("generation"),
                        rs.getString("status"),
                        Optional.ofNullable(rs.getString("verdict")),
                        Optional.ofNullable(rs.getString("failure_reason")),
                        Optional.ofNullable(rs.getTimestamp("finished_at")).map(java.sql.Timestamp::toInstant),
                        rs.getTimestamp("reopened_at").toInstant(),
                        json(runId, rs.getString("gates")),
                        json(runId, rs.getString("rerun"))))
                .list();
    }

    private static JsonNode json(UUID runId, String text) {
        try {
            return JSON.readTree(text);
        } catch (IOException e) {
            throw new DamagedException(
                    "the rerun history of run " + runId + " holds JSON this build cannot read: " + e.getMessage(), e);
        }
    }
}
