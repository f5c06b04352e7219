package dev.vigilo.exec.record;

import dev.vigilo.exec.GateDecision;
import dev.vigilo.exec.GateResult;
import dev.vigilo.plan.Profile;
import dev.vigilo.stats.Confidence;
import dev.vigilo.stats.PassAtK;
import dev.vigilo.stats.ProportionInterval;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * The settled gate table, {@code run_gate_results} (migrations {@code V10}, {@code V13}, {@code V14}): written once, in the
 * settlement transaction, and read by the status views and by {@code vigilo verify}. The one class with that table's
 * SQL. Each row records the counts, the policy (threshold, rule, confidence) and what the gate decided with the
 * interval it decided on; rows settled before {@code V13} hold no decision or interval columns and are read as
 * decided on the point rate at 0.95, their decision their {@code passed_gate}.
 */
public final class GateTable {
    private GateTable() {}

    /**
     * One recorded row: the gate's result and the interval figures as recorded (empty for rows settled before
     * they were recorded; then only the counts can be recomputed).
     */
    public record Row(GateResult gate, Optional<Interval> recorded) {}

    /** The recorded standard error and interval bounds of a row. */
    public record Interval(double stderr, double low, double high) {
        /** The figures of {@code interval}, as settlement records them. */
        public static Interval of(ProportionInterval interval) {
            return new Interval(interval.stderr(), interval.low(), interval.high());
        }
    }

    /** Inserts the decided table, in gate order, in the caller's (settlement's) transaction. */
    public static void insert(Handle h, UUID runId, List<GateResult> gates) {
        var batch = h.prepareBatch("INSERT INTO run_gate_results (run_id, gate_index, name, planned, passed, failed,"
                + " errored, min_pass_rate, passed_gate, decide, confidence, decision, stderr, ci_low, ci_high,"
                + " epoch_passes) VALUES (:r, :i, :n, :p, :ps, :f, :e, :m, :ok, :d, :c, :dc, :se, :lo, :hi,"
                + " CAST(:h AS bigint[]))");
        for (int i = 0; i < gates.size(); i++) {
            GateResult g = gates.get(i);
            Interval interval = Interval.of(g.interval());
            batch.bind("r", runId)
                    .bind("i", i)
                    .bind("n", g.name())
                    .bind("p", g.planned())
                    .bind("ps", g.passed())
                    .bind("f", g.failed())
                    .bind("e", g.errored())
                    .bind("m", g.minPassRate())
                    .bind("ok", g.passedGate().orElseThrow())
                    .bind("d", g.decide().wire())
                    .bind("c", g.confidence().level())
                    .bind("dc", g.decision().orElseThrow().spelling())
                    .bind("se", interval.stderr())
                    .bind("lo", interval.low())
                    .bind("hi", interval.high())
                    .bindByType("h", g.passAtK().map(PassAtK::histogram).orElse(null), long[].class)
                    .add();
        }
        batch.execute();
    }

    /** The recorded table in gate order; empty before settlement. */
    public static List<Row> read(Handle h, UUID runId) {
        return h.createQuery("SELECT name, planned, passed, failed, errored, min_pass_rate, passed_gate, decide,"
                        + " confidence, decision, stderr, ci_low, ci_high, epoch_passes FROM run_gate_results"
                        + " WHERE run_id = :r"
                        + " ORDER BY gate_index")
                .bind("r", runId)
                .map((rs, ctx) -> {
                    String decision = rs.getString("decision");
                    GateDecision decided = decision != null
                            ? GateDecision.fromSpelling(decision)
                            : rs.getBoolean("passed_gate") ? GateDecision.PASSED : GateDecision.FAILED;
                    String rule = rs.getString("decide");
                    Profile.Decide decide = Profile.Decide.fromWire(rule)
                            .orElseThrow(() -> new IllegalStateException("unknown decide " + rule));
                    GateResult gate = new GateResult(
                            rs.getString("name"),
                            rs.getLong("planned"),
                            rs.getLong("passed"),
                            rs.getLong("failed"),
                            rs.getLong("errored"),
                            rs.getDouble("min_pass_rate"),
                            decide,
                            Confidence.of(rs.getDouble("confidence")),
                            Optional.of(decided),
                            Optional.ofNullable(rs.getArray("epoch_passes")).map(GateTable::histogram));
                    Optional<Interval> interval = decision == null
                            ? Optional.empty()
                            : Optional.of(new Interval(
                                    rs.getDouble("stderr"), rs.getDouble("ci_low"), rs.getDouble("ci_high")));
                    return new Row(gate, interval);
                })
                .list();
    }

    private static PassAtK histogram(java.sql.Array a) {
        try {
            return PassAtK.of(ChunkRows.longs(a));
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The recorded results alone. */
    public static List<GateResult> results(Handle h, UUID runId) {
        return read(h, runId).stream().map(Row::gate).toList();
    }

    /**
     * Removes the settled table when {@code vigilo run rerun-errors} reopens the run (its figures were kept in the
     * rerun history first, in the same transaction); the next settlement inserts the new one.
     */
    public static void clearForRerun(Handle h, UUID runId) {
        h.createUpdate("DELETE FROM run_gate_results WHERE run_id = :r")
                .bind("r", runId)
                .execute();
    }
}
