package dev.vigilo.exec.admission;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.exec.record.ChunkSeed;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The per-shard folds of admitted chunks, acknowledged in the control database with the chunk cursor
 * ({@code run_plans.admission_folds}, at most 128 entries). Each fold is a chain,
 * {@code f' = SHA-256(f || chunk index u64 || chunk id (16 bytes) || case count u32 || membership SHA-256)} starting
 * from 32 zero bytes, so it can be stored and resumed after any acknowledged page; verification recomputes it from
 * the local rows and compares. Mutable; owned by one admitting thread.
 */
final class AdmissionFolds {
    private static final ObjectMapper MAPPER = StrictJson.newMapper();

    /** One shard's running totals. */
    record Entry(long chunks, long cases, byte[] fold) {}

    private final Map<Integer, Entry> shards = new TreeMap<>();

    /** Adds one chunk to its shard's chain. */
    void add(ChunkSeed c) {
        Entry e = shards.getOrDefault(c.shard(), new Entry(0, 0, new byte[32]));
        shards.put(c.shard(), new Entry(e.chunks() + 1, e.cases() + c.caseCount(), next(e.fold(), c)));
    }

    static byte[] next(byte[] previous, ChunkSeed c) {
        MessageDigest d = Sha256.newDigest();
        d.update(previous);
        ByteBuffer b = ByteBuffer.allocate(28);
        UUID id = c.chunkId();
        b.putLong(c.chunkIndex())
                .putLong(id.getMostSignificantBits())
                .putLong(id.getLeastSignificantBits())
                .putInt(c.caseCount());
        d.update(b.array());
        d.update(c.membership().toBytes());
        return d.digest();
    }

    Map<Integer, Entry> shards() {
        return shards;
    }

    AdmissionFolds copy() {
        AdmissionFolds c = new AdmissionFolds();
        c.shards.putAll(shards);
        return c;
    }

    String toJson() {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        ArrayNode a = n.putArray("shards");
        shards.forEach((shard, e) -> a.addObject()
                .put("shard", shard)
                .put("chunks", e.chunks())
                .put("cases", e.cases())
                .put("fold", Sha256.ofDigest(e.fold()).toHex()));
        return n.toString();
    }

    static AdmissionFolds parse(Optional<String> json) {
        AdmissionFolds f = new AdmissionFolds();
        if (json.isEmpty()) {
            return f;
        }
        try {
            JsonNode n = MAPPER.readTree(json.get());
            for (JsonNode s : n.path("shards")) {
                f.shards.put(
                        s.path("shard").asInt(),
                        new Entry(
                                s.path("chunks").asLong(),
                                s.path("cases").asLong(),
                                Sha256.parseHex(s.path("fold").asText()).toBytes()));
            }
            return f;
        } catch (IOException | RuntimeException e) {
            throw new DamagedException("the run's acknowledged admission folds cannot be read (" + e.getMessage()
                    + "); the control record run_plans.admission_folds was altered");
        }
    }
}
