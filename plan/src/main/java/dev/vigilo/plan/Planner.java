package dev.vigilo.plan;

import dev.vigilo.dataset.CaseFields;
import dev.vigilo.dataset.CaseFold;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.IndexTreeBuilder;
import dev.vigilo.dataset.StoredCase;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The deterministic planner: consumes cases in ordinal order and emits plan files to a {@link GroupWriter} in
 * dependency order. Retains one chunk page (at most 100 cases), one open chunk index document per level (the
 * shared {@link IndexTreeBuilder}: at most 8 levels of 512 entries) and 128 shard accumulators; never a dataset-wide list. Output bytes depend only on the run id, the profile
 * and the dataset's cases, so a replay reproduces them exactly. Not thread-safe.
 */
final class Planner {
    private final UUID runId;
    private final Profile profile;
    private final DatasetEntry dataset;
    private final GroupWriter writer;
    private final long[] requiredMask;
    private final Shard[] shards = new Shard[PlanShape.SHARDS];
    private final long[] evaluatorCases;
    private final long[] gateCases;
    private long unselected;
    private final List<ChunkFile.Entry> page = new ArrayList<>(PlanShape.CHUNK_CASES);
    private long pageFirstOrdinal;
    private long nextChunk;
    private long cases;
    private final IndexTreeBuilder<ChunkIndexDocument.Entry> chunkIndex;
    /** Next document sequence number per index level (the key of a level's n-th document). */
    private final long[] indexSeq = new long[PlanLayout.INDEX_MAX_LEVELS];

    /** Per-shard accumulator. */
    private static final class Shard {
        long cases;
        long chunks;
        final CaseFold projection = new CaseFold();
        final Fold settlement = new Fold();
        final long[] gates;

        Shard(int gateCount) {
            gates = new long[gateCount];
        }
    }

    /** What the finished planner hands to publication: the manifest, its reference and every used shard's totals. */
    record Result(ObjectRef root, PlanManifest manifest, List<ShardTotals> shards) {
        Result {
            shards = List.copyOf(shards);
        }
    }

    Planner(UUID runId, Profile profile, DatasetEntry dataset, GroupWriter writer) {
        this.runId = runId;
        this.profile = profile;
        this.dataset = dataset;
        this.writer = writer;
        this.requiredMask = new long[profile.gates().size()];
        for (int g = 0; g < requiredMask.length; g++) {
            for (String name : profile.gates().get(g).requiredEvaluators()) {
                requiredMask[g] |= 1L << indexOf(name);
            }
        }
        this.evaluatorCases = new long[profile.evaluators().size()];
        this.gateCases = new long[profile.gates().size()];
        this.chunkIndex = new IndexTreeBuilder<>(
                PlanLayout.INDEX_MAX_ENTRIES,
                PlanLayout.INDEX_MAX_LEVELS,
                this::writeIndex,
                () -> new IllegalStateException("chunk index would exceed " + PlanLayout.INDEX_MAX_LEVELS + " levels"));
    }

    private int indexOf(String evaluator) {
        for (int i = 0; i < profile.evaluators().size(); i++) {
            if (profile.evaluators().get(i).name().equals(evaluator)) {
                return i;
            }
        }
        throw new IllegalStateException("unknown evaluator " + evaluator);
    }

    void accept(StoredCase c) {
        if (c.ordinal() != cases) {
            throw new IllegalStateException("case ordinal " + c.ordinal() + " out of order, expected " + cases);
        }
        CaseFields fields = c.fields();
        long eval = 0;
        for (int i = 0; i < evaluatorCases.length; i++) {
            if (Selection.applies(profile.evaluators().get(i), fields)) {
                eval |= 1L << i;
                evaluatorCases[i]++;
            }
        }
        long gates = 0;
        for (int g = 0; g < gateCases.length; g++) {
            if ((eval & requiredMask[g]) == requiredMask[g]
                    && Selection.matches(profile.gates().get(g).selector(), fields)) {
                gates |= 1L << g;
            }
        }
        if (gates == 0) {
            unselected++;
        }
        if (page.isEmpty()) {
            pageFirstOrdinal = c.ordinal();
        }
        page.add(new ChunkFile.Entry(c.ordinal(), c.id(), c.sha256(), eval, gates));
        cases++;
        if (page.size() == PlanShape.CHUNK_CASES) {
            emitChunk();
        }
    }

    private void emitChunk() {
        long index = nextChunk;
        // The chunk's cases, encoded once for both folds they enter: the chunk's membership and its shard's projection.
        CaseFold.Batch entries = new CaseFold.Batch();
        for (ChunkFile.Entry e : page) {
            entries.add(e.ordinal(), e.id(), e.sha256());
        }
        CaseFold fold = new CaseFold();
        fold.addAll(entries);
        Sha256 membership = fold.finish();
        UUID chunkId = Fold.chunkId(runId, index);
        ChunkFile file =
                new ChunkFile(runId, index, chunkId, PlanShape.shardOf(index), pageFirstOrdinal, page, membership);
        byte[] bytes = file.encode();
        ObjectRef ref = ObjectRef.of(PlanLayout.chunk(runId, index), bytes);
        writer.add(new GroupWriter.Pending(ref, bytes, PlanFileKind.CHUNK, index));
        account(file, ref, entries);
        page.clear();
    }

    /**
     * Takes chunk {@code file}, acknowledged by an earlier attempt of this run, in place of its cases: a resume
     * restores every accumulator, the case count and the chunk index exactly as emitting the chunk did, without
     * writing it again. Chunks come in order from chunk 0, before any case is accepted; {@code entries} are the
     * chunk's cases encoded for a fold ({@link CaseFold.Batch}).
     *
     * @throws IllegalStateException when the chunk is not the next one
     */
    void restoreChunk(ChunkFile file, ObjectRef ref, CaseFold.Batch entries) {
        if (!page.isEmpty() || file.chunkIndex() != nextChunk || file.firstOrdinal() != cases) {
            throw new IllegalStateException("chunk " + file.chunkIndex() + " restored out of order (next chunk "
                    + nextChunk + ", next ordinal " + cases + ")");
        }
        for (ChunkFile.Entry e : file.cases()) {
            for (int i = 0; i < evaluatorCases.length; i++) {
                if ((e.evaluators() & (1L << i)) != 0) {
                    evaluatorCases[i]++;
                }
            }
            if (e.gates() == 0) {
                unselected++;
            }
        }
        cases += file.cases().size();
        account(file, ref, entries);
    }

    /**
     * Adds an emitted or restored chunk to its shard's accumulator, the gate counts and the chunk index;
     * {@code entries} are its cases encoded for a fold.
     */
    private void account(ChunkFile file, ObjectRef ref, CaseFold.Batch entries) {
        long index = nextChunk++;
        int shardNo = PlanShape.shardOf(index);
        Shard shard = shards[shardNo];
        if (shard == null) {
            shard = shards[shardNo] = new Shard(gateCases.length);
        }
        shard.projection.addAll(entries);
        for (ChunkFile.Entry e : file.cases()) {
            for (int g = 0; g < gateCases.length; g++) {
                if ((e.gates() & (1L << g)) != 0) {
                    shard.gates[g]++;
                    gateCases[g]++;
                }
            }
        }
        int count = file.cases().size();
        shard.settlement.addChunk(index, file.chunkId(), count, file.membership());
        shard.cases += count;
        shard.chunks++;
        chunkIndex.add(new ChunkIndexDocument.Entry(ref, index, 1, file.firstOrdinal(), count));
    }

    /** Writes one chunk index document (after its children, which were added to the writer before). */
    private ChunkIndexDocument.Entry writeIndex(int level, List<ChunkIndexDocument.Entry> entries) {
        ChunkIndexDocument doc = ChunkIndexDocument.of(level, entries);
        byte[] bytes = doc.encode();
        ObjectRef ref = ObjectRef.of(PlanLayout.index(runId, level, indexSeq[level]++), bytes);
        writer.add(new GroupWriter.Pending(ref, bytes, PlanFileKind.INDEX, null));
        return new ChunkIndexDocument.Entry(
                ref, doc.firstChunk(), doc.chunkCount(), doc.firstOrdinal(), doc.caseCount());
    }

    /** Emits the last, partial chunk page; call once after the last case was accepted. */
    void completeCases() {
        if (!page.isEmpty()) {
            emitChunk();
        }
    }

    /** Index of the first gate that selects no case, if any (valid after {@link #completeCases()}). */
    Optional<Integer> emptyGate() {
        for (int g = 0; g < gateCases.length; g++) {
            if (gateCases[g] == 0) {
                return Optional.of(g);
            }
        }
        return Optional.empty();
    }

    /**
     * Emits the remaining index levels, the gate chain (tail to head), the configuration and the manifest, and
     * flushes. Call only after {@link #completeCases()}, once the dataset pass passed its identity check and
     * {@link #emptyGate()} is empty.
     */
    Result finish() {
        if (!page.isEmpty()) {
            throw new IllegalStateException("completeCases() was not called");
        }
        IndexTreeBuilder.Root<ChunkIndexDocument.Entry> index = chunkIndex.finish();
        ObjectRef indexRoot = index.entry().ref();
        int indexLevels = index.levels();
        // Gate chain, tail to head: each file links the next one, so the next must exist first.
        int gateCount = profile.gates().size();
        Optional<ObjectRef> next = Optional.empty();
        for (int g = gateCount - 1; g >= 0; g--) {
            List<GateFile.ShardCount> counts = new ArrayList<>();
            for (int s = 0; s < PlanShape.SHARDS; s++) {
                if (shards[s] != null) {
                    counts.add(new GateFile.ShardCount(s, shards[s].gates[g]));
                }
            }
            GateFile gf = new GateFile(runId, g, gateCount, profile.gates().get(g), gateCases[g], counts, next);
            byte[] bytes = gf.encode();
            ObjectRef ref = ObjectRef.of(PlanLayout.gate(runId, g), bytes);
            writer.add(new GroupWriter.Pending(ref, bytes, PlanFileKind.GATE, null));
            next = Optional.of(ref);
        }
        List<ShardTotals> totals = new ArrayList<>();
        for (int s = 0; s < PlanShape.SHARDS; s++) {
            Shard sh = shards[s];
            if (sh == null) {
                continue;
            }
            List<ShardTotals.GateCount> gates = new ArrayList<>(gateCount);
            for (int g = 0; g < gateCount; g++) {
                gates.add(new ShardTotals.GateCount(profile.gates().get(g).name(), sh.gates[g]));
            }
            totals.add(new ShardTotals(s, sh.cases, sh.chunks, sh.projection.finish(), sh.settlement.finish(), gates));
        }
        int used = totals.size();
        byte[] config = PlanConfiguration.encode(
                runId, profile, dataset, nextChunk, used, evaluatorCases, gateCases, unselected);
        ObjectRef configRef = ObjectRef.of(PlanLayout.configuration(runId), config);
        writer.add(new GroupWriter.Pending(configRef, config, PlanFileKind.CONFIGURATION, null));
        PlanManifest manifest = new PlanManifest(
                runId,
                dataset.uploadId(),
                dataset.membershipUuid(),
                dataset.sourceSha256(),
                cases,
                nextChunk,
                configRef,
                indexRoot,
                indexLevels,
                next.orElseThrow(),
                gateCount,
                totals.stream().map(ShardTotals::manifestShard).toList());
        byte[] mbytes = manifest.encode();
        ObjectRef root = ObjectRef.of(PlanLayout.manifest(runId), mbytes);
        writer.add(new GroupWriter.Pending(root, mbytes, PlanFileKind.MANIFEST, null));
        writer.complete();
        return new Result(root, manifest, totals);
    }

    long cases() {
        return cases;
    }

    static long expectedChunks(long caseCount) {
        return (caseCount + PlanShape.CHUNK_CASES - 1) / PlanShape.CHUNK_CASES;
    }
}
