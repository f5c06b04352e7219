package dev.vigilo.exec.record;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * Per-shard sums over an execution database's chunk rows, by aggregate SQL (one row per shard and one per shard and
 * gate; at most 128 and 128 x 64): chunk counts by state, cases, and the per-gate passed/failed/errored tallies the
 * fenced completions copied from the receipts. No object-store read; the rows carry everything. Runs inside the
 * caller's bounded transaction.
 */
public final class ShardTallies {
    private ShardTallies() {}

    /**
     * One shard's sums.
     *
     * @param chunks       chunk rows
     * @param chunksDone   done chunks (a receipt counts)
     * @param chunksFailed failed chunks (their cases never ran)
     * @param chunksOpen   queued or leased chunks (execution not over)
     * @param cases        cases of every chunk row
     * @param casesDone    cases of done chunks (each executed: passed, failed or errored)
     * @param casesErrored cases of done chunks whose agent ended in an error
     * @param passed       per gate in gate order, over done chunks
     * @param failed       likewise
     * @param errored      likewise
     * @param epochPasses  in a run of n > 1 epochs, the sums of the done chunks' epoch pass histograms (gate g's
     *                     count of cases with c passing epochs at {@code g * (n + 1) + c}); empty with one epoch
     * @param malformed    done rows whose tallies cannot be right (wrong lengths, counts beyond the chunk's cases, a
     *                     histogram that does not count the gate's passed and failed cases)
     * @param chunksExpired chunks claimed again after a lease of theirs expired (execution migration V9), whatever
     *                     their state now
     */
    public record Tally(
            int shard,
            long chunks,
            long chunksDone,
            long chunksFailed,
            long chunksOpen,
            long cases,
            long casesDone,
            long casesErrored,
            long[] passed,
            long[] failed,
            long[] errored,
            long[] epochPasses,
            long malformed,
            long chunksExpired) {}

    /** One gate's outcomes summed over shards. */
    public record GateSum(long passed, long failed, long errored) {}

    /** Gate {@code g}'s outcomes summed over {@code tallies} (each holding counts for at least {@code g + 1} gates). */
    public static GateSum sum(Collection<Tally> tallies, int g) {
        long passed = 0;
        long failed = 0;
        long errored = 0;
        for (Tally t : tallies) {
            passed += t.passed()[g];
            failed += t.failed()[g];
            errored += t.errored()[g];
        }
        return new GateSum(passed, failed, errored);
    }

    /**
     * Gate {@code g}'s epoch pass histogram summed over {@code tallies}, of a run of {@code epochs} > 1 epochs: element
     * c counts the cases with c passing epochs.
     */
    public static long[] epochPasses(Collection<Tally> tallies, int g, int epochs) {
        long[] out = new long[epochs + 1];
        for (Tally t : tallies) {
            for (int c = 0; c <= epochs; c++) {
                out[c] += t.epochPasses()[g * (epochs + 1) + c];
            }
        }
        return out;
    }

    /**
     * The sums of {@code shards} (rows of other shards are ignored) of a run of {@code gates} gates and {@code epochs}
     * epochs; a shard without rows is absent.
     */
    public static Map<Integer, Tally> read(Handle h, UUID runId, List<Integer> shards, int gates, int epochs) {
        int histogram = epochs > 1 ? gates * (epochs + 1) : 0;
        Map<Integer, Tally> out = new TreeMap<>();
        h.createQuery("SELECT shard, count(*) AS chunks,"
                        + " count(*) FILTER (WHERE state = 'done') AS done,"
                        + " count(*) FILTER (WHERE state = 'failed') AS failed,"
                        + " count(*) FILTER (WHERE state IN ('queued', 'leased')) AS open,"
                        + " sum(case_count) AS cases,"
                        + " coalesce(sum(case_count) FILTER (WHERE state = 'done'), 0) AS cases_done,"
                        + " coalesce(sum(cases_errored) FILTER (WHERE state = 'done'), 0) AS cases_errored,"
                        + " count(*) FILTER (WHERE state = 'done' AND NOT coalesce(cases_executed = case_count"
                        + " AND cases_errored BETWEEN 0 AND case_count AND cardinality(gate_passed) = :g"
                        + " AND cardinality(gate_failed) = :g AND cardinality(gate_errored) = :g"
                        + " AND array_position(gate_passed, NULL) IS NULL AND array_position(gate_failed, NULL) IS NULL"
                        + " AND array_position(gate_errored, NULL) IS NULL"
                        + " AND coalesce(cardinality(gate_epoch_passes), 0) = :h"
                        + " AND array_position(gate_epoch_passes, NULL) IS NULL, false)) AS malformed,"
                        + " count(*) FILTER (WHERE lease_expiries > 0) AS expired"
                        + " FROM exec_chunks WHERE run_id = :r AND shard = ANY(:s) GROUP BY shard")
                .bind("r", runId)
                .bind("g", gates)
                .bind("h", histogram)
                .bindArray("s", Integer.class, shards)
                .mapToMap()
                .forEach(m -> {
                    int shard = ((Number) m.get("shard")).intValue();
                    out.put(
                            shard,
                            new Tally(
                                    shard,
                                    num(m, "chunks"),
                                    num(m, "done"),
                                    num(m, "failed"),
                                    num(m, "open"),
                                    num(m, "cases"),
                                    num(m, "cases_done"),
                                    num(m, "cases_errored"),
                                    new long[gates],
                                    new long[gates],
                                    new long[gates],
                                    new long[histogram],
                                    num(m, "malformed"),
                                    num(m, "expired")));
                });
        // Per gate: sums, and rows where one gate's outcomes exceed the chunk's cases (counted as malformed).
        h.createQuery("SELECT c.shard, g.i, sum(g.p) AS p, sum(g.f) AS f, sum(g.e) AS e,"
                        + " count(*) FILTER (WHERE g.p < 0 OR g.f < 0 OR g.e < 0 OR g.p + g.f + g.e > c.case_count)"
                        + " AS bad FROM exec_chunks c CROSS JOIN LATERAL"
                        + " unnest(c.gate_passed, c.gate_failed, c.gate_errored) WITH ORDINALITY AS g(p, f, e, i)"
                        + " WHERE c.run_id = :r AND c.shard = ANY(:s) AND c.state = 'done' AND g.i <= :g"
                        + " GROUP BY c.shard, g.i")
                .bind("r", runId)
                .bind("g", gates)
                .bindArray("s", Integer.class, shards)
                .mapToMap()
                .forEach(m -> {
                    Tally t = out.get(((Number) m.get("shard")).intValue());
                    int i = ((Number) m.get("i")).intValue() - 1;
                    t.passed()[i] = num(m, "p");
                    t.failed()[i] = num(m, "f");
                    t.errored()[i] = num(m, "e");
                    if (num(m, "bad") > 0) {
                        out.put(t.shard(), withMalformed(t, num(m, "bad")));
                    }
                });
        if (histogram > 0) {
            readEpochPasses(h, runId, shards, gates, epochs, out);
        }
        return out;
    }

    /**
     * The histograms' sums per shard and element, and rows where a gate's histogram does not count exactly its passed
     * and failed cases (counted as malformed).
     */
    private static void readEpochPasses(
            Handle h, UUID runId, List<Integer> shards, int gates, int epochs, Map<Integer, Tally> out) {
        h.createQuery("SELECT c.shard, x.i, sum(x.v) AS v FROM exec_chunks c CROSS JOIN LATERAL"
                        + " unnest(c.gate_epoch_passes) WITH ORDINALITY AS x(v, i)"
                        + " WHERE c.run_id = :r AND c.shard = ANY(:s) AND c.state = 'done' AND x.i <= :h"
                        + " GROUP BY c.shard, x.i")
                .bind("r", runId)
                .bind("h", gates * (epochs + 1))
                .bindArray("s", Integer.class, shards)
                .mapToMap()
                .forEach(m -> {
                    Tally t = out.get(((Number) m.get("shard")).intValue());
                    t.epochPasses()[((Number) m.get("i")).intValue() - 1] = num(m, "v");
                });
        h.createQuery("SELECT c.shard, count(*) AS bad FROM exec_chunks c CROSS JOIN LATERAL"
                        + " generate_series(1, :g) AS g(i) WHERE c.run_id = :r AND c.shard = ANY(:s)"
                        + " AND c.state = 'done' AND cardinality(c.gate_epoch_passes) = :h"
                        + " AND (SELECT sum(v) FROM unnest(c.gate_epoch_passes[(g.i - 1) * :w + 1 : g.i * :w]) AS v)"
                        + " IS DISTINCT FROM c.gate_passed[g.i] + c.gate_failed[g.i]"
                        + " GROUP BY c.shard")
                .bind("r", runId)
                .bind("g", gates)
                .bind("w", epochs + 1)
                .bind("h", gates * (epochs + 1))
                .bindArray("s", Integer.class, shards)
                .mapToMap()
                .forEach(m -> {
                    int shard = ((Number) m.get("shard")).intValue();
                    out.put(shard, withMalformed(out.get(shard), num(m, "bad")));
                });
    }

    private static Tally withMalformed(Tally t, long more) {
        return new Tally(
                t.shard(),
                t.chunks(),
                t.chunksDone(),
                t.chunksFailed(),
                t.chunksOpen(),
                t.cases(),
                t.casesDone(),
                t.casesErrored(),
                t.passed(),
                t.failed(),
                t.errored(),
                t.epochPasses(),
                t.malformed() + more,
                t.chunksExpired());
    }

    private static long num(Map<String, Object> m, String column) {
        Object v = m.get(column);
        return v == null ? 0 : ((Number) v).longValue();
    }

    /** Whether any chunk of {@code shards} is queued or leased (uses the claimable index). */
    public static boolean anyOpen(Handle h, UUID runId, List<Integer> shards) {
        return h.createQuery("SELECT EXISTS (SELECT 1 FROM exec_chunks WHERE run_id = :r AND shard = ANY(:s)"
                        + " AND state IN ('queued', 'leased'))")
                .bind("r", runId)
                .bindArray("s", Integer.class, shards)
                .mapTo(Boolean.class)
                .one();
    }
}
