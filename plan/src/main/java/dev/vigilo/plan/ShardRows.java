package dev.vigilo.plan;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.PreparedBatch;

/**
 * The SQL shape of {@code run_plan_shards} (migration {@code V2__plan_runs.sql}): one row per used shard with its
 * totals and folds as hex, the execution database alias of the shard under the frozen placement rule, and {@code gate_counts}, a JSON list of
 * {@code [gate name, planned count]} in profile gate order. The only code that writes or reads those rows.
 */
final class ShardRows {
    private ShardRows() {}

    /** Inserts the rows of a run's used shards, inside the caller's (publication) transaction. */
    static void insert(Handle h, UUID runId, List<ShardTotals> shards, String initialPlacement) {
        PreparedBatch b = h.prepareBatch("INSERT INTO run_plan_shards (run_id, shard, cases, chunks,"
                + " projection_sha256, settlement_sha256, gate_counts, placement_alias)"
                + " VALUES (:r, :s, :c, :k, :p, :t, :g, :a)");
        for (ShardTotals s : shards) {
            b.bind("r", runId)
                    .bind("s", s.shard())
                    .bind("c", s.cases())
                    .bind("k", s.chunks())
                    .bind("p", s.projection().toHex())
                    .bind("t", s.settlement().toHex())
                    .bind("g", gateCountsJson(s.gates()))
                    .bind("a", placementAlias(initialPlacement, s.shard()))
                    .add();
        }
        b.execute();
    }

    /** The run's shard rows in ascending shard order, as {@code run status} shows them. */
    static List<RunStatus.Shard> read(Handle h, UUID runId) {
        List<RunStatus.Shard> shards = new ArrayList<>();
        for (Map<String, Object> s : h.createQuery("SELECT shard, cases, chunks, gate_counts FROM run_plan_shards"
                        + " WHERE run_id = :r ORDER BY shard")
                .bind("r", runId)
                .mapToMap()
                .list()) {
            Map<String, Long> gates;
            try {
                gates = gateCounts((String) s.get("gate_counts"));
            } catch (UncheckedIOException e) {
                throw PlanErrors.damaged(
                        runId,
                        "the stored gate counts of shard " + s.get("shard") + " do not decode: "
                                + ((JsonProcessingException) e.getCause()).getOriginalMessage(),
                        e);
            }
            shards.add(new RunStatus.Shard(
                    ((Number) s.get("shard")).intValue(),
                    ((Number) s.get("cases")).longValue(),
                    ((Number) s.get("chunks")).longValue(),
                    gates));
        }
        return shards;
    }

    /**
     * The execution database alias of {@code shard} under the frozen rule {@code round-robin:128:a,b,...}: alias
     * {@code shard mod n}. Runs frozen before placements existed ({@code round-robin:128}) live in the control
     * database.
     */
    static String placementAlias(String initialPlacement, int shard) {
        return PlanShape.placementAliases(initialPlacement)
                .map(aliases -> aliases.get(shard % aliases.size()))
                .orElse("control");
    }

    /** {@code [["all",300],["math",100]]}: compact, gate order kept. */
    static String gateCountsJson(List<ShardTotals.GateCount> gates) {
        ArrayNode a = JsonNodeFactory.instance.arrayNode();
        for (ShardTotals.GateCount g : gates) {
            a.addArray().add(g.gate()).add(g.planned());
        }
        return new String(ProfileJson.bytes(a), StandardCharsets.UTF_8);
    }

    /**
     * The inverse of {@link #gateCountsJson}: gate name to planned count, in gate order.
     *
     * @throws UncheckedIOException wrapping the {@link JsonProcessingException} when {@code json} does not parse
     */
    static Map<String, Long> gateCounts(String json) {
        Map<String, Long> gates = new LinkedHashMap<>();
        try {
            for (JsonNode pair : ProfileJson.MAPPER.readTree(json)) {
                gates.put(pair.get(0).asText(), pair.get(1).asLong());
            }
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
        return gates;
    }
}
