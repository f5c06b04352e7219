package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The run-plan manifest, format {@code vigilo.plan.manifest} version 1 (docs/formats/plan-manifest.md): the plan's
 * root. Links the configuration, the chunk index root and the gate chain head to the finalized dataset and records
 * per-shard totals and settlement hashes. Its reference is what publication records. Immutable.
 */
public record PlanManifest(
        UUID runId,
        UUID datasetUploadId,
        UUID membershipUuid,
        Sha256 sourceSha256,
        long cases,
        long chunks,
        ObjectRef configuration,
        ObjectRef chunkIndexRoot,
        int chunkIndexLevels,
        ObjectRef gateHead,
        int gateCount,
        List<Shard> shards) {
    static final String FORMAT = "vigilo.plan.manifest";

    public PlanManifest {
        shards = List.copyOf(shards);
    }

    /** Totals and hashes of one used shard. */
    public record Shard(int shard, long cases, long chunks, Sha256 projection, Sha256 settlement) {}

    byte[] encode() {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("format", FORMAT);
        n.put("version", PlanLayout.FORMAT_VERSION);
        n.put("run_id", runId.toString());
        n.put("chunk_cases", PlanShape.CHUNK_CASES);
        n.put("shard_count", PlanShape.SHARDS);
        ObjectNode d = n.putObject("dataset");
        d.put("upload_id", datasetUploadId.toString());
        d.put("membership_uuid", membershipUuid.toString());
        d.put("source_sha256", sourceSha256.toHex());
        d.put("case_count", cases);
        n.put("expected_chunks", chunks);
        PlanJson.putRef(n.putObject("configuration"), configuration);
        ObjectNode ci = n.putObject("chunk_index");
        PlanJson.putRef(ci, chunkIndexRoot);
        ci.put("levels", chunkIndexLevels);
        ObjectNode g = n.putObject("gates");
        PlanJson.putRef(g, gateHead);
        g.put("count", gateCount);
        ArrayNode a = n.putArray("shards");
        for (Shard s : shards) {
            a.addObject()
                    .put("shard", s.shard())
                    .put("cases", s.cases())
                    .put("chunks", s.chunks())
                    .put("projection_sha256", s.projection().toHex())
                    .put("settlement_sha256", s.settlement().toHex());
        }
        return PlanJson.encode(n);
    }

    static PlanManifest decode(byte[] bytes) {
        JsonNode n = PlanJson.decode(bytes, FORMAT, PlanLayout.FORMAT_VERSION);
        PlanJson.expect(
                PlanJson.num(n, "chunk_cases") == PlanShape.CHUNK_CASES
                        && PlanJson.num(n, "shard_count") == PlanShape.SHARDS,
                "unsupported chunk size or shard count");
        JsonNode d = n.get("dataset");
        PlanJson.expect(d != null, "dataset is missing");
        JsonNode ci = n.get("chunk_index");
        JsonNode g = n.get("gates");
        PlanJson.expect(ci != null && g != null && n.get("configuration") != null, "a root link is missing");
        List<Shard> shards = new ArrayList<>();
        long cases = 0;
        long chunks = 0;
        int prev = -1;
        for (JsonNode s : PlanJson.array(n, "shards")) {
            Shard sh = new Shard(
                    (int) PlanJson.num(s, "shard"),
                    PlanJson.num(s, "cases"),
                    PlanJson.num(s, "chunks"),
                    PlanJson.sha(s, "projection_sha256"),
                    PlanJson.sha(s, "settlement_sha256"));
            PlanJson.expect(
                    sh.shard() > prev && sh.shard() < PlanShape.SHARDS && sh.chunks() >= 1,
                    "shards are not sorted, unique, used and in 0..127");
            prev = sh.shard();
            cases += sh.cases();
            chunks += sh.chunks();
            shards.add(sh);
        }
        long caseCount = PlanJson.num(d, "case_count");
        long expected = PlanJson.num(n, "expected_chunks");
        PlanJson.expect(
                cases == caseCount && chunks == expected,
                "shard totals (" + cases + " cases, " + chunks + " chunks) do not match the plan (" + caseCount + ", "
                        + expected + ")");
        return new PlanManifest(
                PlanJson.uuid(n, "run_id"),
                PlanJson.uuid(d, "upload_id"),
                PlanJson.uuid(d, "membership_uuid"),
                PlanJson.sha(d, "source_sha256"),
                caseCount,
                expected,
                PlanJson.ref(n.get("configuration")),
                PlanJson.ref(ci),
                (int) PlanJson.num(ci, "levels"),
                PlanJson.ref(g),
                (int) PlanJson.num(g, "count"),
                shards);
    }
}
