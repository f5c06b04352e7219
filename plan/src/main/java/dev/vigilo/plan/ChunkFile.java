package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.dataset.CaseFold;
import dev.vigilo.storage.Sha256;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * One execution chunk, format {@code vigilo.plan.chunk} version 1 (docs/formats/plan-chunk.md): at most
 * {@link PlanLayout#CHUNK_CASES} consecutive cases with their ids, hashes and per-case evaluator/gate selection
 * masks, and the chunk's membership digest. Immutable.
 */
public record ChunkFile(
        UUID runId, long chunkIndex, UUID chunkId, int shard, long firstOrdinal, List<Entry> cases, Sha256 membership) {
    static final String FORMAT = "vigilo.plan.chunk";

    public ChunkFile {
        cases = List.copyOf(cases);
    }

    /** One case: which evaluators apply to it and which gates select it, as bit masks (bit i = index i). */
    public record Entry(long ordinal, String id, Sha256 sha256, long evaluators, long gates) {}

    static Sha256 membershipOf(List<Entry> cases) {
        CaseFold f = new CaseFold();
        for (Entry e : cases) {
            f.add(e.ordinal(), e.id(), e.sha256());
        }
        return f.finish();
    }

    byte[] encode() {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("format", FORMAT);
        n.put("version", PlanLayout.FORMAT_VERSION);
        n.put("run_id", runId.toString());
        n.put("chunk_index", chunkIndex);
        n.put("chunk_id", chunkId.toString());
        n.put("shard", shard);
        n.put("first_ordinal", firstOrdinal);
        n.put("case_count", cases.size());
        n.put("membership_sha256", membership.toHex());
        ArrayNode a = n.putArray("cases");
        for (Entry e : cases) {
            ObjectNode c = a.addObject();
            c.put("ordinal", e.ordinal());
            c.put("id", e.id());
            c.put("sha256", e.sha256().toHex());
            c.put("evaluators", Long.toHexString(e.evaluators()));
            c.put("gates", Long.toHexString(e.gates()));
        }
        return PlanJson.encode(n);
    }

    /** Decodes and checks the header, the ordinal sequence, the shard, the chunk id and the membership digest. */
    static ChunkFile decode(byte[] bytes) {
        JsonNode n = PlanJson.decode(bytes, FORMAT, PlanLayout.FORMAT_VERSION);
        UUID runId = PlanJson.uuid(n, "run_id");
        long index = PlanJson.num(n, "chunk_index");
        UUID chunkId = PlanJson.uuid(n, "chunk_id");
        int shard = (int) PlanJson.num(n, "shard");
        long first = PlanJson.num(n, "first_ordinal");
        long count = PlanJson.num(n, "case_count");
        Sha256 membership = PlanJson.sha(n, "membership_sha256");
        PlanJson.expect(
                index >= 0 && shard == PlanLayout.shardOf(index), "shard " + shard + " is not chunk index mod 128");
        PlanJson.expect(chunkId.equals(Fold.chunkId(runId, index)), "chunk_id does not derive from run id and index");
        JsonNode a = PlanJson.array(n, "cases");
        PlanJson.expect(
                count >= 1 && count <= PlanLayout.CHUNK_CASES && a.size() == count,
                "case_count " + count + " does not match " + a.size() + " entries (1.." + PlanLayout.CHUNK_CASES + ")");
        List<Entry> cases = new ArrayList<>(a.size());
        for (int i = 0; i < a.size(); i++) {
            JsonNode c = a.get(i);
            long ordinal = PlanJson.num(c, "ordinal");
            PlanJson.expect(
                    ordinal == first + i, "cases[" + i + "] has ordinal " + ordinal + ", expected " + (first + i));
            try {
                cases.add(new Entry(
                        ordinal,
                        PlanJson.text(c, "id"),
                        PlanJson.sha(c, "sha256"),
                        Long.parseUnsignedLong(PlanJson.text(c, "evaluators"), 16),
                        Long.parseUnsignedLong(PlanJson.text(c, "gates"), 16)));
            } catch (NumberFormatException e) {
                throw new PlanJson.FormatException("cases[" + i + "] has an invalid mask");
            }
        }
        PlanJson.expect(membershipOf(cases).equals(membership), "membership_sha256 does not match the cases");
        return new ChunkFile(runId, index, chunkId, shard, first, cases, membership);
    }
}
