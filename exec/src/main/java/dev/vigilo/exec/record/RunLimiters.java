package dev.vigilo.exec.record;

import dev.vigilo.fleet.LimiterState;
import dev.vigilo.fleet.LimiterTable;
import java.util.List;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * The one owner of {@code run_endpoint_limiters} (control migration V18): which fleet limiter (the fleet module's
 * {@link LimiterTable}) each endpoint of a run uses, recorded by the first worker that builds the run's agent, for
 * status.
 */
public final class RunLimiters {
    private RunLimiters() {}

    /** A run's endpoint and the state of its limiter. */
    public record RunLimiter(String at, LimiterState state) {}

    /** Records that the run's endpoint at {@code at} uses limiter {@code key} (which must exist); idempotent. */
    public static void register(Handle h, UUID runId, String at, String key) {
        h.createUpdate("INSERT INTO run_endpoint_limiters (run_id, at, limiter_key) VALUES (:r, :at, :k)"
                        + " ON CONFLICT (run_id, at) DO NOTHING")
                .bind("r", runId)
                .bind("at", at)
                .bind("k", key)
                .execute();
    }

    /** The limiters of a run's endpoints, in the order of where the configuration names them. */
    public static List<RunLimiter> forRun(Handle h, UUID runId) {
        return h.createQuery("SELECT r.at, " + LimiterTable.columns("l") + " FROM run_endpoint_limiters r"
                        + " JOIN endpoint_limiters l ON l.limiter_key = r.limiter_key WHERE r.run_id = :r"
                        + " ORDER BY r.at")
                .bind("r", runId)
                .map((rs, ctx) -> new RunLimiter(rs.getString("at"), LimiterTable.read(rs)))
                .list();
    }
}
