package dev.vigilo.exec.audit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.dataset.CaseFold;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.StoredCase;
import dev.vigilo.dataset.VerifyReport;
import dev.vigilo.exec.record.PlanRecord;
import dev.vigilo.plan.ChunkFile;
import dev.vigilo.plan.GateFile;
import dev.vigilo.plan.PlanManifest;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * The first pass of {@code vigilo verify}: the dataset and the published plan against each other and against their
 * records. One streaming read of the whole dataset (every index document and case file verified, the count and the
 * membership fold checked against the catalog) is zipped with the plan's chunks in order: every chunk entry must be
 * the dataset's case at its ordinal (id and SHA-256), chunk ids and shards must follow from the chunk index. From the
 * entries it recomputes, per shard, the case and chunk counts, the projection and settlement folds and the gate
 * counts, and per gate and evaluator the selected cases, then compares them with the manifest, the gate files, the
 * configuration and the control database's published shard rows. Memory: one index path, one case file, one page of
 * chunk references and one chunk file, plus 128 shard summaries. Owned by one thread.
 */
final class PlanCheck {
    private static final ObjectMapper MAPPER = StrictJson.newMapper();

    /** One shard's figures recomputed from the chunk files. */
    static final class Shard {
        final int shard;
        long cases;
        long chunks;
        final CaseFold projection = new CaseFold();
        final PublishedPlan.SettlementFold settlement = new PublishedPlan.SettlementFold();
        final long[] gateCounts;
        Sha256 projectionHash;
        Sha256 settlementHash;

        Shard(int shard, int gates) {
            this.shard = shard;
            this.gateCounts = new long[gates];
        }
    }

    private final UUID runId;
    private final PublishedPlan plan;
    private final ObjectReader planStore;
    private final List<GateFile> gates;
    private final List<String> evaluators;
    private final long[] requiredMasks;
    private final Map<Integer, Shard> shards = new TreeMap<>();
    private final long[] gateSelected;
    private final long[] evaluatorSelected;
    private long unselected;
    private PlanChunkWalk cursor;
    private PlanChunkWalk.Chunk current;
    private int position;
    private long nextChunk;
    private long chunks;
    private VerifyReport datasetReport;

    PlanCheck(UUID runId, PublishedPlan plan, ObjectReader planStore, List<GateFile> gates, JsonNode configuration) {
        this.runId = runId;
        this.plan = plan;
        this.planStore = planStore;
        this.gates = List.copyOf(gates);
        this.evaluators = new ArrayList<>();
        for (JsonNode e : configuration.path("evaluator_plan")) {
            evaluators.add(e.path("name").asText());
        }
        this.requiredMasks = new long[gates.size()];
        for (int g = 0; g < gates.size(); g++) {
            for (String name : gates.get(g).gate().requiredEvaluators()) {
                int i = evaluators.indexOf(name);
                if (i < 0) {
                    throw new VerificationFailure(
                            plan.manifest().configuration().key().value(),
                            "gate " + gates.get(g).gate().name() + " requires evaluator " + name
                                    + ", which the configuration's evaluator plan does not have");
                }
                requiredMasks[g] |= 1L << i;
            }
        }
        this.gateSelected = new long[gates.size()];
        this.evaluatorSelected = new long[evaluators.size()];
    }

    /** The recomputed shard figures, by shard (valid after {@link #run}). */
    Map<Integer, Shard> shards() {
        return shards;
    }

    /** Evaluator names in plan order (bit i of an entry's evaluator mask). */
    List<String> evaluators() {
        return evaluators;
    }

    long chunks() {
        return chunks;
    }

    long chunkFiles() {
        return cursor == null ? 0 : cursor.files();
    }

    VerifyReport datasetReport() {
        return datasetReport;
    }

    /** Runs the pass; throws on the first damage or disagreement. */
    void run(DatasetEntry dataset, ObjectReader datasetStore, PlanRecord record, JsonNode configuration, Jdbi control) {
        PlanManifest m = plan.manifest();
        String manifestKey = plan.root().key().value();
        checkIdentity(dataset, record, m, configuration, manifestKey);
        cursor = new PlanChunkWalk(plan, planStore);
        datasetReport = DatasetReader.open(dataset, datasetStore).readVerified(this::accept);
        if (current != null && position < current.file().cases().size()) {
            throw new VerificationFailure(
                    current.ref().ref().key().value(),
                    "chunk " + current.file().chunkIndex() + " lists "
                            + current.file().cases().size() + " cases, the dataset ends after " + position
                            + " of them");
        }
        finishChunk();
        PlanChunkWalk.Chunk extra = cursor.next();
        if (extra != null) {
            throw new VerificationFailure(
                    extra.ref().ref().key().value(),
                    "the chunk index lists chunk " + extra.file().chunkIndex() + " after the dataset's last case");
        }
        checkTotals(m, manifestKey, configuration);
        checkPublishedShards(control);
    }

    private void checkIdentity(
            DatasetEntry d, PlanRecord record, PlanManifest m, JsonNode configuration, String manifestKey) {
        require(
                manifestKey,
                m.datasetUploadId().equals(d.uploadId())
                        && m.membershipUuid().equals(d.membershipUuid())
                        && m.sourceSha256().equals(d.sourceSha256())
                        && m.cases() == d.caseCount(),
                "the manifest's dataset (" + m.datasetUploadId() + ", " + m.cases() + " cases, membership "
                        + m.membershipUuid() + ") is not the catalog's (" + d.uploadId() + ", " + d.caseCount()
                        + " cases, membership " + d.membershipUuid() + ")");
        require(
                null,
                record.datasetUploadId().equals(d.uploadId())
                        && record.datasetMembership().equals(d.membershipUuid())
                        && record.datasetSourceSha256().equals(d.sourceSha256())
                        && record.datasetCases() == d.caseCount(),
                "the run's frozen dataset identity (" + record.datasetUploadId() + ", " + record.datasetCases()
                        + " cases) is not the catalog's (" + d.uploadId() + ", " + d.caseCount() + " cases)");
        JsonNode cd = configuration.path("dataset");
        require(
                m.configuration().key().value(),
                cd.path("upload_id").asText().equals(d.uploadId().toString())
                        && cd.path("source_sha256")
                                .asText()
                                .equals(d.sourceSha256().toHex())
                        && cd.path("source_bytes").asLong() == d.sourceBytes()
                        && cd.path("membership_uuid")
                                .asText()
                                .equals(d.membershipUuid().toString())
                        && cd.path("case_count").asLong() == d.caseCount()
                        && cd.path("index_root")
                                .path("key")
                                .asText()
                                .equals(d.indexRoot().key().value())
                        && cd.path("index_root")
                                .path("sha256")
                                .asText()
                                .equals(d.indexRoot().sha256().toHex())
                        && cd.path("index_levels").asInt() == d.indexLevels(),
                "the configuration's dataset identity is not the catalog entry of dataset " + d.uploadId());
        require(
                m.configuration().key().value(),
                gates.size() == m.gateCount(),
                "the plan has " + gates.size() + " gate files, the manifest says " + m.gateCount());
    }

    /** One dataset case, in ordinal order: it must be the next entry of the plan's chunks. */
    private void accept(StoredCase c) {
        if (current == null || position == current.file().cases().size()) {
            finishChunk();
            current = cursor.next();
            position = 0;
            if (current == null) {
                throw new VerificationFailure(
                        plan.manifest().chunkIndexRoot().key().value(),
                        "the plan's chunks end before the dataset's case at ordinal " + c.ordinal());
            }
            startChunk(current);
        }
        ChunkFile chunk = current.file();
        ChunkFile.Entry e = chunk.cases().get(position++);
        if (e.ordinal() != c.ordinal() || !e.id().equals(c.id()) || !e.sha256().equals(c.sha256())) {
            throw new VerificationFailure(
                    current.ref().ref().key().value(),
                    "chunk " + chunk.chunkIndex() + " lists case \"" + e.id() + "\" at ordinal " + e.ordinal()
                            + " (SHA-256 " + e.sha256().toHex() + "), the dataset has \"" + c.id() + "\" at ordinal "
                            + c.ordinal() + " (SHA-256 " + c.sha256().toHex() + ")");
        }
        if ((gates.size() < 64 && (e.gates() >>> gates.size()) != 0)
                || (evaluators.size() < 64 && (e.evaluators() >>> evaluators.size()) != 0)) {
            throw new VerificationFailure(
                    current.ref().ref().key().value(),
                    "case \"" + e.id() + "\" of chunk " + chunk.chunkIndex() + " names gates or evaluators the plan"
                            + " does not have");
        }
        Shard s = shards.get(chunk.shard());
        s.cases++;
        s.projection.add(e.ordinal(), e.id(), e.sha256());
        if (e.gates() == 0) {
            unselected++;
        }
        for (int g = 0; g < gates.size(); g++) {
            if ((e.gates() & (1L << g)) != 0) {
                s.gateCounts[g]++;
                gateSelected[g]++;
                if ((e.evaluators() & requiredMasks[g]) != requiredMasks[g]) {
                    throw new VerificationFailure(
                            current.ref().ref().key().value(),
                            "case \"" + e.id() + "\" of chunk " + chunk.chunkIndex() + " is selected by gate "
                                    + gates.get(g).gate().name() + " without the evaluators it requires");
                }
            }
        }
        for (int i = 0; i < evaluators.size(); i++) {
            if ((e.evaluators() & (1L << i)) != 0) {
                evaluatorSelected[i]++;
            }
        }
    }

    private void startChunk(PlanChunkWalk.Chunk ch) {
        ChunkFile f = ch.file();
        String key = ch.ref().ref().key().value();
        require(
                key,
                f.chunkIndex() == nextChunk
                        && f.chunkId().equals(PublishedPlan.chunkId(runId, f.chunkIndex()))
                        && f.shard() == PublishedPlan.shardOf(f.chunkIndex()),
                "chunk file " + key + " is chunk " + f.chunkIndex() + " (id " + f.chunkId() + ", shard " + f.shard()
                        + "), the chunk index expects chunk " + nextChunk + " with id "
                        + PublishedPlan.chunkId(runId, nextChunk) + " in shard " + PublishedPlan.shardOf(nextChunk));
        nextChunk++;
        shards.computeIfAbsent(f.shard(), s -> new Shard(s, gates.size()));
    }

    private void finishChunk() {
        if (current == null) {
            return;
        }
        ChunkFile f = current.file();
        Shard s = shards.get(f.shard());
        s.chunks++;
        s.settlement.add(f.chunkIndex(), f.chunkId(), f.cases().size(), f.membership());
        chunks++;
        current = null;
    }

    /** Totals and hashes against the manifest, the gate files and the configuration. */
    private void checkTotals(PlanManifest m, String manifestKey, JsonNode configuration) {
        require(
                manifestKey,
                chunks == m.chunks(),
                "the chunk index holds " + chunks + " chunks, the manifest says " + m.chunks());
        List<Integer> used = new ArrayList<>(shards.keySet());
        List<Integer> listed =
                m.shards().stream().map(PlanManifest.Shard::shard).toList();
        require(manifestKey, used.equals(listed), "the chunks use shards " + used + ", the manifest lists " + listed);
        for (PlanManifest.Shard ms : m.shards()) {
            Shard s = shards.get(ms.shard());
            Sha256 projection = s.projection.finish();
            Sha256 settlement = s.settlement.finish();
            s.projectionHash = projection;
            s.settlementHash = settlement;
            require(
                    manifestKey,
                    s.cases == ms.cases()
                            && s.chunks == ms.chunks()
                            && projection.equals(ms.projection())
                            && settlement.equals(ms.settlement()),
                    "shard " + ms.shard() + ": the chunks give " + s.cases + " cases, " + s.chunks
                            + " chunks, projection " + projection.toHex() + ", settlement " + settlement.toHex()
                            + "; the manifest records " + ms.cases() + ", " + ms.chunks() + ", "
                            + ms.projection().toHex() + ", " + ms.settlement().toHex());
        }
        for (int g = 0; g < gates.size(); g++) {
            GateFile gf = gates.get(g);
            String name = gf.gate().name();
            require(
                    null,
                    gf.selectedCases() == gateSelected[g],
                    "gate " + name + ": the chunks select " + gateSelected[g] + " cases, its gate file plans "
                            + gf.selectedCases());
            require(
                    null,
                    gf.shards().stream()
                            .map(GateFile.ShardCount::shard)
                            .toList()
                            .equals(new ArrayList<>(shards.keySet())),
                    "gate " + name + "'s file counts shards "
                            + gf.shards().stream()
                                    .map(GateFile.ShardCount::shard)
                                    .toList() + ", the chunks use " + shards.keySet());
            for (GateFile.ShardCount sc : gf.shards()) {
                Shard s = shards.get(sc.shard());
                long counted = s == null ? -1 : s.gateCounts[g];
                require(
                        null,
                        counted == sc.count(),
                        "gate " + name + ", shard " + sc.shard() + ": the chunks select " + counted
                                + " cases, the gate file plans " + sc.count());
            }
        }
        String configKey = m.configuration().key().value();
        JsonNode plan = configuration.path("evaluator_plan");
        for (int i = 0; i < evaluators.size(); i++) {
            require(
                    configKey,
                    plan.get(i).path("applies_to_cases").asLong(-1) == evaluatorSelected[i],
                    "evaluator " + evaluators.get(i) + " applies to " + evaluatorSelected[i]
                            + " cases by the chunks, the configuration says "
                            + plan.get(i).path("applies_to_cases").asLong(-1));
        }
        JsonNode ex = configuration.path("executability");
        require(
                configKey,
                ex.path("cases").asLong() == m.cases()
                        && ex.path("chunks").asLong() == chunks
                        && ex.path("shards_used").asInt() == shards.size()
                        && ex.path("unselected_cases").asLong() == unselected,
                "the configuration's executability summary (" + ex.path("cases").asLong() + " cases, "
                        + ex.path("chunks").asLong() + " chunks, "
                        + ex.path("unselected_cases").asLong()
                        + " unselected) differs from the chunks (" + m.cases() + ", " + chunks + ", " + unselected
                        + ")");
        int g = 0;
        for (JsonNode gc : ex.path("gate_cases")) {
            require(
                    configKey,
                    g < gates.size()
                            && gc.path("gate")
                                    .asText()
                                    .equals(gates.get(g).gate().name())
                            && gc.path("cases").asLong() == gateSelected[g],
                    "the configuration's gate_cases entry " + gc + " differs from the chunks");
            g++;
        }
    }

    /** The control database's published shard rows against the recomputed figures. */
    private void checkPublishedShards(Jdbi control) {
        List<Map<String, Object>> rows = control.withHandle(
                h -> h.createQuery("SELECT shard, cases, chunks, projection_sha256, settlement_sha256, gate_counts"
                                + " FROM run_plan_shards WHERE run_id = :r ORDER BY shard")
                        .bind("r", runId)
                        .mapToMap()
                        .list());
        List<Integer> listed =
                rows.stream().map(r -> ((Number) r.get("shard")).intValue()).toList();
        require(
                null,
                listed.equals(new ArrayList<>(shards.keySet())),
                "the control database publishes shards " + listed + ", the chunks use " + shards.keySet());
        for (Map<String, Object> r : rows) {
            int shard = ((Number) r.get("shard")).intValue();
            Shard s = shards.get(shard);
            long[] counts = new long[gates.size()];
            List<String> names = new ArrayList<>();
            try {
                JsonNode a = MAPPER.readTree((String) r.get("gate_counts"));
                for (int g = 0; g < a.size() && g < counts.length; g++) {
                    names.add(a.get(g).path(0).asText());
                    counts[g] = a.get(g).path(1).asLong();
                }
            } catch (IOException e) {
                throw new VerificationFailure(null, "shard " + shard + "'s published gate counts cannot be read");
            }
            boolean same = ((Number) r.get("cases")).longValue() == s.cases
                    && ((Number) r.get("chunks")).longValue() == s.chunks
                    && Objects.equals(r.get("projection_sha256"), s.projectionHash.toHex())
                    && Objects.equals(r.get("settlement_sha256"), s.settlementHash.toHex())
                    && Arrays.equals(counts, s.gateCounts)
                    && names.equals(gates.stream().map(x -> x.gate().name()).toList());
            require(
                    null,
                    same,
                    "shard " + shard + ": the control database publishes " + r.get("cases") + " cases, "
                            + r.get("chunks") + " chunks, gate counts " + r.get("gate_counts")
                            + "; the chunks give " + s.cases + ", " + s.chunks + ", " + Arrays.toString(s.gateCounts));
        }
    }

    private static void require(String key, boolean ok, String what) {
        if (!ok) {
            throw new VerificationFailure(key, what);
        }
    }
}
