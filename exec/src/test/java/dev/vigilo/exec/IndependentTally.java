package dev.vigilo.exec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.plan.GateFile;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The gate table computed the long way, for comparison with settlement: planned counts and thresholds from the
 * plan's gate files, outcomes counted case by case from every receipt a done chunk row (in its shard's current
 * placement) references, parsed as plain JSON.
 */
public final class IndependentTally {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** One gate, as counted here. */
    public record Gate(String name, long planned, long passed, long failed, long errored, double minPassRate) {
        boolean meets() {
            // Integer form of passed / planned >= min, with a tolerance for the binary threshold.
            return passed >= (long) Math.ceil(minPassRate * planned - 1e-9);
        }
    }

    private IndependentTally() {}

    public static Map<String, Gate> compute(ExecFixture fx, Placements placements, UUID run) {
        PublishedPlan plan = fx.plan(run);
        Map<String, long[]> counts = new LinkedHashMap<>();
        Map<String, GateFile> files = new LinkedHashMap<>();
        for (GateFile g : plan.gates(Deadline.after(Duration.ofSeconds(30)))) {
            counts.put(g.gate().name(), new long[3]);
            files.put(g.gate().name(), g);
        }
        for (ObjectRef receipt : receipts(placements, run)) {
            JsonNode doc = read(fx.store, receipt);
            for (JsonNode c : doc.path("cases")) {
                c.path("gates").properties().forEach(e -> {
                    long[] n = counts.get(e.getKey());
                    switch (e.getValue().asText()) {
                        case "passed" -> n[0]++;
                        case "failed" -> n[1]++;
                        case "errored" -> n[2]++;
                        default -> throw new AssertionError(e.getValue());
                    }
                });
            }
        }
        Map<String, Gate> out = new LinkedHashMap<>();
        files.forEach((name, g) -> {
            long[] n = counts.get(name);
            out.put(
                    name,
                    new Gate(name, g.selectedCases(), n[0], n[1], n[2], g.gate().minPassRate()));
        });
        return out;
    }

    /** The receipt references of done chunks, each read from its shard's current placement. */
    public static List<ObjectRef> receipts(Placements placements, UUID run) {
        List<ObjectRef> out = new ArrayList<>();
        RunRecords.byPlacement(placements.control().withHandle(h -> RunRecords.routes(h, run, "")))
                .forEach((alias, shards) -> placements
                        .jdbi(alias)
                        .useHandle(h -> h.createQuery("SELECT receipt_key, receipt_length, receipt_sha256 FROM"
                                        + " exec_chunks WHERE run_id = :r AND shard = ANY(:s) AND state = 'done'")
                                .bind("r", run)
                                .bindArray("s", Integer.class, shards)
                                .map((rs, ctx) -> new ObjectRef(
                                        ObjectKey.of(rs.getString(1)), rs.getLong(2), Sha256.parseHex(rs.getString(3))))
                                .forEach(out::add)));
        return out;
    }

    static JsonNode read(ObjectStore store, ObjectRef ref) {
        try {
            return MAPPER.readTree(store.read(ref, Deadline.after(Duration.ofSeconds(30))));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
