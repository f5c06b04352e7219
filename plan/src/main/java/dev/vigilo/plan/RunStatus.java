package dev.vigilo.plan;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * A run's status as {@code vigilo run status --json} prints it; component names map 1:1 onto the JSON keys
 * ({@code run_id}, {@code status}, {@code dispatchable}, {@code creation_progress.plan_status},
 * {@code creation_progress.plan_chunk_cursor}, {@code creation_lease.expires_at/reclaimable_in_seconds},
 * {@code expected_chunks}, {@code shards[].shard/cases/chunks/gates}). Shards are listed only once the plan is
 * published (before that only the cursor moves); the creation lease only while a creator holds it.
 *
 * @param runId            the run
 * @param status           the run's state
 * @param dispatchable     whether coordinators may dispatch it
 * @param creationProgress plan status and chunk cursor
 * @param creationLease    the live creation lease, while a creator holds one
 * @param expectedChunks   chunks the plan will have
 * @param shards           used shards in ascending order, each with gate name to planned count in gate order
 * @param rejection        why preparation was rejected, when plan_status is rejected
 */
public record RunStatus(
        UUID runId,
        RunState status,
        boolean dispatchable,
        CreationProgress creationProgress,
        Optional<CreationLease> creationLease,
        long expectedChunks,
        List<Shard> shards,
        Optional<String> rejection) {
    public RunStatus {
        shards = List.copyOf(shards);
    }

    /**
     * The {@code --json} form, exactly: {@code {"run_id","status","dispatchable","creation_progress":{"plan_status",
     * "plan_chunk_cursor"},"expected_chunks","shards":[{"shard","cases","chunks","gates":{name:count}}]}} plus
     * {@code "creation_lease":{"expires_at","reclaimable_in_seconds"}} after {@code creation_progress} while a
     * creator holds the lease, and {@code "rejection"} when present. Compact, one line.
     */
    public String toJson() {
        com.fasterxml.jackson.databind.node.ObjectNode n =
                com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        n.put("run_id", runId.toString());
        n.put("status", status.spelling());
        n.put("dispatchable", dispatchable);
        n.putObject("creation_progress")
                .put("plan_status", creationProgress.planStatus().spelling())
                .put("plan_chunk_cursor", creationProgress.planChunkCursor());
        creationLease.ifPresent(l -> n.putObject("creation_lease")
                .put("expires_at", l.expiresAt().toString())
                .put("reclaimable_in_seconds", l.reclaimableInSeconds()));
        n.put("expected_chunks", expectedChunks);
        var a = n.putArray("shards");
        for (Shard s : shards) {
            var o = a.addObject()
                    .put("shard", s.shard())
                    .put("cases", s.cases())
                    .put("chunks", s.chunks());
            var g = o.putObject("gates");
            s.gates().forEach(g::put);
        }
        rejection.ifPresent(r -> n.put("rejection", r));
        return new String(ProfileJson.bytes(n), java.nio.charset.StandardCharsets.UTF_8);
    }

    /** {@code creation_progress}: {@code plan_status} and {@code plan_chunk_cursor}. */
    public record CreationProgress(PlanStatus planStatus, long planChunkCursor) {}

    /** One shard: {@code shard}, {@code cases}, {@code chunks}, {@code gates} (an ordered map). */
    public record Shard(int shard, long cases, long chunks, Map<String, Long> gates) {
        public Shard {
            gates = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(gates));
        }
    }
}
