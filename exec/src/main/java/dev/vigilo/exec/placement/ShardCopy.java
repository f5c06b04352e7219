package dev.vigilo.exec.placement;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.DamagedException;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * The execution-database SQL of a shard move: freezing the shard at its source, and copying the run snapshot, the
 * shard snapshot and the shard's chunk rows (identity, scheduling state, receipts and tallies) to the target. Rows
 * travel as JSON of the table's own row type, at most {@value #PAGE} per statement. Every method runs inside the
 * caller's bounded transaction.
 *
 * <p>The target is written by upsert: identity columns (what admission seeded from the plan) must equal what exists,
 * or the copy is a conflict; runtime columns are overwritten from the frozen source, which is safe because no route
 * points at the target until the move's last step. A leased chunk arrives queued without owner, and every unfinished
 * chunk's lease generation is advanced by one, so no claim at the target can share a generation (and so a receipt
 * key) with a worker that claimed at the source, even one whose claim raced the freeze.
 *
 * <p>An unfinished chunk's partial receipt reference travels too (docs/execution.md, "Resume from partial receipts"):
 * the chain's links are immutable objects of the store the placements share, each written under a generation below
 * the target's, so a claim at the target verifies and carries the chain as a claim at the source would. A holder at
 * the source that keeps writing links after the copy only adds links nobody references: the target resumes from the
 * head the copy took, and the source's completion is refused.
 */
final class ShardCopy {
    /** Chunk rows per copy statement. */
    static final int PAGE = 256;

    private ShardCopy() {}

    /** The source's shard snapshot row and run snapshot, as JSON of their row types. */
    record Source(String runRow, String runSha, String shardRow, long epoch, long chunks) {}

    private static final String IDENTITY = "shard, shard_seq, chunk_id, first_ordinal, case_count, membership_sha256,"
            + " chunk_key, chunk_length, chunk_sha256";

    /**
     * Freezes the shard at the source: locks its row {@code FOR UPDATE} (completions hold it {@code FOR SHARE}, so
     * none is in flight afterwards) and sets it {@code moved}, unless it already is (a resumed move).
     *
     * @throws CancelledException the run was cancelled (the shard row is closed)
     * @throws DamagedException   the source has no row for the shard, or it is at another route epoch
     */
    static Source freeze(Handle h, UUID runId, int shard, long routeEpoch, String alias) {
        Optional<Map<String, Object>> row = h.createQuery("SELECT state, route_epoch, chunks, to_jsonb(s)::text AS j"
                        + " FROM exec_run_shards s WHERE run_id = :r AND shard = :s FOR UPDATE")
                .bind("r", runId)
                .bind("s", shard)
                .mapToMap()
                .findOne();
        String at = "shard " + shard + " of run " + runId + " in execution database \"" + alias + "\"";
        if (row.isEmpty()) {
            throw new DamagedException(
                    at + " has no shard row although its route points there; the execution" + " records were altered");
        }
        Map<String, Object> m = row.get();
        long epoch = ((Number) m.get("route_epoch")).longValue();
        if (epoch != routeEpoch) {
            throw new DamagedException(at + " is at route epoch " + epoch + ", its route at " + routeEpoch
                    + "; the execution records were altered");
        }
        switch ((String) m.get("state")) {
            case "cancelled" ->
                throw new CancelledException(
                        "run " + runId + " was cancelled; " + at + " is closed and stays where it is");
            case "open" ->
                h.createUpdate("UPDATE exec_run_shards SET state = 'moved' WHERE run_id = :r AND shard = :s")
                        .bind("r", runId)
                        .bind("s", shard)
                        .execute();
            default -> {
                // moved: an interrupted move is being resumed; the source is already frozen.
            }
        }
        Map<String, Object> run = h.createQuery(
                        "SELECT to_jsonb(r)::text AS j, snapshot_sha256 FROM exec_runs r" + " WHERE run_id = :r")
                .bind("r", runId)
                .mapToMap()
                .one();
        return new Source(
                (String) run.get("j"),
                (String) run.get("snapshot_sha256"),
                (String) m.get("j"),
                epoch,
                ((Number) m.get("chunks")).longValue());
    }

    /** One page of the shard's chunk rows after {@code afterChunk}, as a JSON array, or empty at the end. */
    record Page(String rows, int count, long last) {}

    static Optional<Page> page(Handle h, UUID runId, int shard, long afterChunk) {
        Map<String, Object> m = h.createQuery("SELECT count(*) AS n, max(chunk_index) AS last,"
                        + " jsonb_agg(to_jsonb(c) ORDER BY c.chunk_index)::text AS j FROM (SELECT * FROM exec_chunks"
                        + " WHERE run_id = :r AND shard = :s AND chunk_index > :after ORDER BY chunk_index LIMIT "
                        + PAGE + ") c")
                .bind("r", runId)
                .bind("s", shard)
                .bind("after", afterChunk)
                .mapToMap()
                .one();
        int n = ((Number) m.get("n")).intValue();
        return n == 0
                ? Optional.empty()
                : Optional.of(new Page((String) m.get("j"), n, ((Number) m.get("last")).longValue()));
    }

    /**
     * Writes the run snapshot (if absent) and the shard snapshot at the target, open at {@code newEpoch}.
     *
     * @throws ConflictException  the target holds another snapshot of the run or of the shard
     * @throws CancelledException the target's copy of the shard was closed by a cancellation
     */
    static void prepareTarget(Handle h, UUID runId, int shard, Source src, long newEpoch, String alias) {
        String at = "execution database \"" + alias + "\"";
        h.createUpdate("INSERT INTO exec_runs SELECT * FROM jsonb_populate_record(NULL::exec_runs, :j::jsonb)"
                        + " ON CONFLICT (run_id) DO NOTHING")
                .bind("j", src.runRow())
                .execute();
        String sha = h.createQuery("SELECT snapshot_sha256 FROM exec_runs WHERE run_id = :r")
                .bind("r", runId)
                .mapTo(String.class)
                .one();
        if (!sha.equals(src.runSha())) {
            throw new ConflictException(at + " holds a different snapshot of run " + runId + " (sha256 " + sha
                    + ", the source's " + src.runSha() + "); the shard cannot move there");
        }
        h.createUpdate("INSERT INTO exec_run_shards SELECT * FROM jsonb_populate_record(NULL::exec_run_shards,"
                        + " :j::jsonb) ON CONFLICT (run_id, shard) DO NOTHING")
                .bind("j", src.shardRow())
                .execute();
        Map<String, Object> same = h.createQuery("SELECT t.state, (t.cases, t.chunks, t.projection_sha256,"
                        + " t.settlement_sha256, t.gate_counts) = (x.cases, x.chunks, x.projection_sha256,"
                        + " x.settlement_sha256, x.gate_counts) AS same FROM exec_run_shards t,"
                        + " jsonb_populate_record(NULL::exec_run_shards, :j::jsonb) x"
                        + " WHERE t.run_id = :r AND t.shard = :s FOR UPDATE OF t")
                .bind("j", src.shardRow())
                .bind("r", runId)
                .bind("s", shard)
                .mapToMap()
                .one();
        if (!Boolean.TRUE.equals(same.get("same"))) {
            throw new ConflictException(at + " holds a different snapshot of shard " + shard + " of run " + runId
                    + "; the shard cannot move there");
        }
        if ("cancelled".equals(same.get("state"))) {
            throw new CancelledException("run " + runId + " was cancelled; shard " + shard + " was not moved");
        }
        h.createUpdate("UPDATE exec_run_shards SET state = 'open', route_epoch = :e WHERE run_id = :r AND shard = :s")
                .bind("e", newEpoch)
                .bind("r", runId)
                .bind("s", shard)
                .execute();
    }

    /**
     * Upserts one page of chunk rows at the target.
     *
     * @throws ConflictException a row at the target has another identity (another plan's chunk)
     */
    static void writePage(Handle h, UUID runId, Page page, String alias) {
        int n = h.createUpdate("INSERT INTO exec_chunks (run_id, chunk_index, " + IDENTITY + ", state, lease_owner,"
                        + " lease_generation, lease_expires_at, attempts, not_before, last_error, receipt_key,"
                        + " receipt_length, receipt_sha256, cases_executed, cases_errored, gate_passed, gate_failed,"
                        + " gate_errored, gate_epoch_passes, usage, agreement, finished_at, rerun_generation,"
                        + " previous_receipt_key, previous_receipt_length, previous_receipt_sha256, lease_expiries,"
                        + " partial_key, partial_length, partial_sha256, partial_cases)"
                        + " SELECT x.run_id, x.chunk_index, x.shard, x.shard_seq, x.chunk_id, x.first_ordinal,"
                        + " x.case_count, x.membership_sha256, x.chunk_key, x.chunk_length, x.chunk_sha256,"
                        + " CASE WHEN x.state = 'leased' THEN 'queued' ELSE x.state END, NULL,"
                        + " x.lease_generation + CASE WHEN x.state IN ('queued', 'leased') THEN 1 ELSE 0 END, NULL,"
                        + " x.attempts, x.not_before, x.last_error, x.receipt_key, x.receipt_length,"
                        + " x.receipt_sha256, x.cases_executed, x.cases_errored, x.gate_passed, x.gate_failed,"
                        + " x.gate_errored, x.gate_epoch_passes, x.usage, x.agreement, x.finished_at,"
                        // a chunk queued again by rerun-errors keeps what it reruns (execution migration V6)
                        + " x.rerun_generation, x.previous_receipt_key, x.previous_receipt_length,"
                        + " x.previous_receipt_sha256,"
                        // a source migrated before V9 has no such field
                        + " coalesce(x.lease_expiries, 0),"
                        // the partial receipt chain's head travels with the row: its links are objects of the
                        // shared store, so a resume at the target carries them (execution migration V10)
                        + " x.partial_key, x.partial_length, x.partial_sha256, x.partial_cases"
                        + " FROM jsonb_populate_recordset(NULL::exec_chunks, :j::jsonb) AS x WHERE x.run_id = :r"
                        + " ON CONFLICT (run_id, chunk_index) DO UPDATE SET state = EXCLUDED.state,"
                        + " lease_owner = NULL, lease_generation = EXCLUDED.lease_generation, lease_expires_at = NULL,"
                        + " attempts = EXCLUDED.attempts, not_before = EXCLUDED.not_before,"
                        + " last_error = EXCLUDED.last_error, receipt_key = EXCLUDED.receipt_key,"
                        + " receipt_length = EXCLUDED.receipt_length, receipt_sha256 = EXCLUDED.receipt_sha256,"
                        + " cases_executed = EXCLUDED.cases_executed, cases_errored = EXCLUDED.cases_errored,"
                        + " gate_passed = EXCLUDED.gate_passed, gate_failed = EXCLUDED.gate_failed,"
                        + " gate_errored = EXCLUDED.gate_errored, gate_epoch_passes = EXCLUDED.gate_epoch_passes,"
                        + " usage = EXCLUDED.usage, agreement = EXCLUDED.agreement,"
                        + " finished_at = EXCLUDED.finished_at, rerun_generation = EXCLUDED.rerun_generation,"
                        + " previous_receipt_key = EXCLUDED.previous_receipt_key,"
                        + " previous_receipt_length = EXCLUDED.previous_receipt_length,"
                        + " previous_receipt_sha256 = EXCLUDED.previous_receipt_sha256,"
                        + " lease_expiries = EXCLUDED.lease_expiries, partial_key = EXCLUDED.partial_key,"
                        + " partial_length = EXCLUDED.partial_length, partial_sha256 = EXCLUDED.partial_sha256,"
                        + " partial_cases = EXCLUDED.partial_cases"
                        + " WHERE (exec_chunks." + IDENTITY.replace(", ", ", exec_chunks.") + ") = (EXCLUDED."
                        + IDENTITY.replace(", ", ", EXCLUDED.") + ")")
                .bind("j", page.rows())
                .bind("r", runId)
                .execute();
        if (n != page.count()) {
            Optional<Long> chunk = h.createQuery("SELECT t.chunk_index FROM exec_chunks t JOIN"
                            + " jsonb_populate_recordset(NULL::exec_chunks, :j::jsonb) AS x USING (run_id, chunk_index)"
                            + " WHERE (t." + IDENTITY.replace(", ", ", t.") + ") IS DISTINCT FROM (x."
                            + IDENTITY.replace(", ", ", x.") + ") ORDER BY 1 LIMIT 1")
                    .bind("j", page.rows())
                    .mapTo(Long.class)
                    .findOne();
            throw new ConflictException("execution database \"" + alias + "\" already holds a different row for chunk "
                    + chunk.map(String::valueOf).orElse("?") + " of run " + runId + "; the shard cannot move there");
        }
    }

    /** Chunk rows of the shard at this database. */
    static long count(Handle h, UUID runId, int shard) {
        return h.createQuery("SELECT count(*) FROM exec_chunks WHERE run_id = :r AND shard = :s")
                .bind("r", runId)
                .bind("s", shard)
                .mapTo(Long.class)
                .one();
    }

    /** Closes the target's copy after the run was cancelled mid-move (best effort by the caller). */
    static int close(Handle h, UUID runId, int shard) {
        return h.createUpdate("UPDATE exec_run_shards SET state = 'cancelled' WHERE run_id = :r AND shard = :s"
                        + " AND state = 'open'")
                .bind("r", runId)
                .bind("s", shard)
                .execute();
    }
}
