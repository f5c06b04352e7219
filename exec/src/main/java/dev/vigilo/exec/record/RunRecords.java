package dev.vigilo.exec.record;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.plan.RunLifecycle;
import dev.vigilo.plan.RunState;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * The control records settlement, status, cancellation, results and shard moves read: the run row and the run's
 * shard routes (at most 128). Every method runs on the caller's handle, inside its transaction when it has one.
 */
public final class RunRecords {
    private RunRecords() {}

    /**
     * The run row as execution sees it.
     *
     * @param status        the run's state, read once from {@code runs.status} here
     * @param verdict       passed or failed, when settled
     * @param failureReason why the run failed, when failed
     * @param storageBinding the store holding the run's plan, receipts and outputs
     * @param initialPlacement the frozen placement rule
     * @param pauseReason   why the run is paused, while it is
     * @param pausedAt      since when it is paused, while it is
     */
    public record Run(
            UUID runId,
            RunState status,
            Optional<String> verdict,
            Optional<String> failureReason,
            String storageBinding,
            String initialPlacement,
            Optional<String> pauseReason,
            Optional<java.time.Instant> pausedAt) {
        public boolean active() {
            return RunLifecycle.EXECUTING.contains(status);
        }
    }

    /** One shard's route: where its records live now, and whether work may proceed there. */
    public record Route(int shard, String placement, String state, long epoch, Optional<Long> dispatchCursor) {
        public boolean active() {
            return "active".equals(state);
        }
    }

    private static final String RUN_COLUMNS = "SELECT r.run_id, r.status, r.verdict, r.failure_reason,"
            + " r.pause_reason, r.paused_at, p.storage_binding, p.initial_placement FROM runs r JOIN run_plans p USING (run_id) WHERE r.run_id = :r";

    /** The aliases of the execution databases the run's shard routes name (any state), unordered. */
    public static List<String> placementsOf(Handle h, UUID runId) {
        return h.createQuery("SELECT DISTINCT placement FROM exec_shard_routes WHERE run_id = :r")
                .bind("r", runId)
                .mapTo(String.class)
                .list();
    }

    /**
     * Reads the run.
     *
     * @throws NotFoundException when no run has this id
     */
    public static Run run(Handle h, UUID runId) {
        return find(h, runId, "").orElseThrow(() -> notFound(runId));
    }

    /** Reads and locks the run row ({@code FOR UPDATE}, or {@code FOR SHARE} when {@code exclusive} is false). */
    public static Run lock(Handle h, UUID runId, boolean exclusive) {
        return find(h, runId, exclusive ? " FOR UPDATE OF r" : " FOR SHARE OF r")
                .orElseThrow(() -> notFound(runId));
    }

    private static Optional<Run> find(Handle h, UUID runId, String lock) {
        return h.createQuery(RUN_COLUMNS + lock)
                .bind("r", runId)
                .mapToMap()
                .findOne()
                .map(m -> new Run(
                        runId,
                        state(runId, (String) m.get("status")),
                        Optional.ofNullable((String) m.get("verdict")),
                        Optional.ofNullable((String) m.get("failure_reason")),
                        (String) m.get("storage_binding"),
                        (String) m.get("initial_placement"),
                        Optional.ofNullable((String) m.get("pause_reason")),
                        Optional.ofNullable((java.sql.Timestamp) m.get("paused_at"))
                                .map(java.sql.Timestamp::toInstant)));
    }

    /**
     * The run state a {@code runs.status} spelling names ({@code runs}' check constraint admits only {@link RunState}'s
     * spellings, so anything else is a row this build cannot read).
     */
    private static RunState state(UUID runId, String spelling) {
        try {
            return RunState.fromSpelling(spelling);
        } catch (IllegalArgumentException e) {
            throw new DamagedException(
                    "run " + runId + " has status \"" + spelling + "\", which this build does not"
                            + " know; a newer Vigilo may have written it",
                    e);
        }
    }

    public static NotFoundException notFound(UUID runId) {
        return new NotFoundException("run " + runId + " does not exist in this control database; check the id"
                + " (vigilo run create prints it) and the control database setting");
    }

    /** The run's routes in ascending shard order; {@code lock} is empty, {@code FOR SHARE} or {@code FOR UPDATE}. */
    public static List<Route> routes(Handle h, UUID runId, String lock) {
        return h.createQuery("SELECT shard, placement, state, route_epoch, dispatch_cursor FROM exec_shard_routes"
                        + " WHERE run_id = :r ORDER BY shard " + lock)
                .bind("r", runId)
                .map((rs, ctx) -> new Route(
                        rs.getInt("shard"),
                        rs.getString("placement"),
                        rs.getString("state"),
                        rs.getLong("route_epoch"),
                        Optional.ofNullable((Long) rs.getObject("dispatch_cursor", Long.class))))
                .list();
    }

    /** Shards grouped by their route's current placement, each list ascending. */
    public static Map<String, List<Integer>> byPlacement(List<Route> routes) {
        Map<String, List<Integer>> out = new java.util.TreeMap<>();
        for (Route r : routes) {
            out.computeIfAbsent(r.placement(), a -> new java.util.ArrayList<>()).add(r.shard());
        }
        return out;
    }
}
