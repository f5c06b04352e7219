package dev.vigilo.exec.placement;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.plan.RunLifecycle;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * Reads of the control database a worker needs between claims: which runs are dispatchable and where their shards
 * live. Stateless; every call reads current values (placements and routes move).
 */
public final class ShardRoutes {
    private ShardRoutes() {}

    /** One active route of a dispatchable run. */
    record Route(UUID runId, int shard, String placement, long dispatchCursor, long epoch) {}

    /** The active routes of every dispatchable run (pending or running), grouped by placement. */
    public static Map<String, List<ChunkTables.Claimable>> claimable(Jdbi control) {
        Map<String, List<ChunkTables.Claimable>> out = new LinkedHashMap<>();
        control.useHandle(h -> h.createQuery("SELECT s.run_id, s.shard, s.placement, s.dispatch_cursor"
                        + " FROM runs r JOIN exec_shard_routes s USING (run_id)"
                        + " WHERE " + RunLifecycle.executing("r.status") + " AND r.dispatchable AND s.state = 'active'"
                        + " AND s.dispatch_cursor IS NOT NULL ORDER BY r.created_at, s.run_id, s.shard")
                .mapToMap()
                .forEach(m -> out.computeIfAbsent((String) m.get("placement"), k -> new ArrayList<>())
                        .add(new ChunkTables.Claimable(
                                (UUID) m.get("run_id"),
                                ((Number) m.get("shard")).intValue(),
                                ((Number) m.get("dispatch_cursor")).longValue()))));
        return out;
    }

    /** Marks the run running on its first claim (a no-op after that). */
    public static void markRunning(Jdbi control, UUID runId) {
        CrashPoints.boundary("exec.mark-running");
        control.useHandle(h -> RunLifecycle.markRunning(h, runId));
    }

    /**
     * Of {@code runs}, those that may no longer execute (cancelled, failed, settled or gone). A paused run is not
     * stopped: the chunks held when it was paused finish.
     */
    public static List<UUID> stopped(Jdbi control, List<UUID> runs) {
        if (runs.isEmpty()) {
            return List.of();
        }
        List<UUID> live = control.withHandle(h -> h.createQuery(
                        "SELECT run_id FROM runs WHERE run_id = ANY(:r)" + " AND " + RunLifecycle.executing("status"))
                .bindArray("r", UUID.class, runs)
                .mapTo(UUID.class)
                .list());
        List<UUID> out = new ArrayList<>(runs);
        out.removeAll(live);
        return out;
    }

    /**
     * Of {@code runs}, those paused by a pause that interrupts held chunks ({@code vigilo run pause --now}, a budget
     * that ran out): their workers give back what they hold.
     */
    public static List<UUID> interrupted(Jdbi control, List<UUID> runs) {
        if (runs.isEmpty()) {
            return List.of();
        }
        return control.withHandle(h -> h.createQuery(
                        "SELECT run_id FROM runs WHERE run_id = ANY(:r) AND " + RunLifecycle.interruptingPause(""))
                .bindArray("r", UUID.class, runs)
                .mapTo(UUID.class)
                .list());
    }

    /** Runs whose admission was requested and whose creator is gone (no live creation lease), oldest first. */
    public static List<UUID> admissionCandidates(Jdbi control, int limit) {
        return control.withHandle(h -> h.createQuery("SELECT r.run_id FROM runs r JOIN run_plans p USING (run_id)"
                        + " WHERE " + RunLifecycle.awaitingAdmission("r", "p")
                        + " AND (r.creation_owner IS NULL OR r.creation_lease_expires_at < clock_timestamp())"
                        + " ORDER BY r.updated_at LIMIT :n")
                .bind("n", limit)
                .mapTo(UUID.class)
                .list());
    }

    /**
     * Runs that are dispatchable or awaiting admission, each with the execution databases it needs: the current routes
     * of a dispatchable run, every alias of the frozen initial placement of a run awaiting admission (admission needs
     * them all).
     */
    public static Map<UUID, Set<String>> unfinished(Jdbi control) {
        Map<UUID, Set<String>> out = new LinkedHashMap<>();
        control.useHandle(h -> {
            h.createQuery("SELECT s.run_id, s.placement FROM runs r JOIN exec_shard_routes s USING (run_id)" + " WHERE "
                            + RunLifecycle.runnable("r.status"))
                    .map((rs, ctx) -> Map.entry(rs.getObject(1, UUID.class), rs.getString(2)))
                    .forEach(e -> out.computeIfAbsent(e.getKey(), k -> new HashSet<>())
                            .add(e.getValue()));
            h.createQuery("SELECT r.run_id, p.initial_placement FROM runs r JOIN run_plans p USING (run_id)" + " WHERE "
                            + RunLifecycle.awaitingAdmission("r", "p"))
                    .map((rs, ctx) -> Map.entry(rs.getObject(1, UUID.class), rs.getString(2)))
                    .forEach(e -> out.computeIfAbsent(e.getKey(), k -> new HashSet<>())
                            .addAll(Placements.aliasesOf(e.getValue())));
        });
        return out;
    }

    /** Dispatchable runs (pending or running), oldest first: candidates for settlement. */
    public static List<UUID> dispatchable(Jdbi control) {
        return control.withHandle(h -> h.createQuery(
                        "SELECT run_id FROM runs WHERE " + RunLifecycle.executing("status") + " ORDER BY created_at")
                .mapTo(UUID.class)
                .list());
    }
}
