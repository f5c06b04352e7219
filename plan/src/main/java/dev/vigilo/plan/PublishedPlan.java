package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectNotFoundException;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Verified reads of a published plan, for admission and workers: the manifest, the configuration, the gate chain and
 * the chunk files, each fetched through its reference (length and SHA-256 checked by the store) and decoded with its
 * format's parser, which checks the format's own invariants (docs/formats/plan-*.md).
 *
 * <p>Every failure to find or verify a file is a {@link DamagedException} naming the file; storage availability
 * failures propagate as the store's {@code UnavailableException} (or {@code CancelledException}) so callers can retry
 * them. Memory: the chunk walk holds one index path
 * (at most 8 documents of at most 256 KiB) at a time. Thread-safe after {@link #open}: the manifest is immutable.
 */
public final class PublishedPlan {
    private final ObjectReader store;
    private final UUID runId;
    private final ObjectRef root;
    private final PlanManifest manifest;

    private PublishedPlan(ObjectReader store, UUID runId, ObjectRef root, PlanManifest manifest) {
        this.store = store;
        this.runId = runId;
        this.root = root;
        this.manifest = manifest;
    }

    /**
     * Reads and decodes the manifest at {@code root} and checks that it belongs to {@code runId}.
     *
     * @throws DamagedException when the manifest is missing, altered, invalid or another run's
     */
    public static PublishedPlan open(UUID runId, ObjectRef root, ObjectReader store, Deadline deadline) {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(store, "store");
        PlanManifest m = decode(runId, root, () -> PlanManifest.decode(read(runId, store, root, deadline)));
        if (!m.runId().equals(runId)) {
            throw PlanErrors.damaged(runId, "plan manifest " + root.key() + " belongs to run " + m.runId());
        }
        return new PublishedPlan(store, runId, root, m);
    }

    public UUID runId() {
        return runId;
    }

    /** The manifest's reference: the published root. */
    public ObjectRef root() {
        return root;
    }

    /** The decoded manifest: dataset identity, totals, per-shard hashes and the links to everything else. */
    public PlanManifest manifest() {
        return manifest;
    }

    /**
     * Reads the frozen configuration (docs/formats/plan-configuration.md) and checks that it belongs to this run.
     *
     * @return the configuration document (read-only)
     */
    public JsonNode configuration(Deadline deadline) {
        ObjectRef ref = manifest.configuration();
        return decode(runId, ref, () -> {
            JsonNode n = PlanJson.decode(read(runId, store, ref, deadline), PlanConfiguration.FORMAT, 1);
            PlanJson.expect(runId.equals(PlanJson.uuid(n, "run_id")), "belongs to another run");
            JsonNode profile = n.get("profile");
            PlanJson.expect(
                    profile != null && Sha256.of(ProfileJson.bytes(profile)).equals(PlanJson.sha(n, "profile_sha256")),
                    "profile body does not match profile_sha256");
            PlanJson.expect(
                    n.path("agent").isObject() && n.path("evaluator_plan").isArray(), "agent or plan missing");
            return n;
        });
    }

    /** Reads the whole gate chain, in gate order (at most 64 small files). */
    public List<GateFile> gates(Deadline deadline) {
        List<GateFile> gates = new ArrayList<>(manifest.gateCount());
        ObjectRef at = manifest.gateHead();
        for (int g = 0; g < manifest.gateCount(); g++) {
            ObjectRef ref = at;
            int index = g;
            GateFile gf = decode(runId, ref, () -> GateFile.decode(read(runId, store, ref, deadline), runId, index));
            if (gf.gateCount() != manifest.gateCount()) {
                throw PlanErrors.damaged(runId, "gate file " + ref.key() + " disagrees with the manifest's count");
            }
            gates.add(gf);
            at = gf.next().orElse(null);
        }
        return gates;
    }

    /** A chunk file's reference and the range it covers, as the chunk index lists it. */
    public record ChunkRef(long chunkIndex, ObjectRef ref, long firstOrdinal, int caseCount) {}

    /** Receives chunk references in chunk order; returns false to stop the walk. */
    @FunctionalInterface
    public interface ChunkVisitor {
        boolean visit(ChunkRef chunk);
    }

    /**
     * Walks the chunk index in chunk order, starting at chunk {@code fromChunk}, skipping index subtrees that end
     * before it (so a resumed walk does not re-read what it passed). Each index document is verified and its range
     * checked against its parent's entry.
     */
    public void forEachChunk(long fromChunk, Deadline deadline, ChunkVisitor visitor) {
        walk(
                manifest.chunkIndexRoot(),
                manifest.chunkIndexLevels() - 1,
                0,
                manifest.chunks(),
                0,
                manifest.cases(),
                fromChunk,
                deadline,
                visitor);
    }

    private boolean walk(
            ObjectRef ref,
            int level,
            long firstChunk,
            long chunkCount,
            long firstOrdinal,
            long caseCount,
            long from,
            Deadline deadline,
            ChunkVisitor visitor) {
        ChunkIndexDocument doc = decode(
                runId,
                ref,
                () -> ChunkIndexDocument.decode(
                        read(runId, store, ref, deadline), level, firstChunk, chunkCount, firstOrdinal, caseCount));
        for (ChunkIndexDocument.Entry e : doc.entries()) {
            if (e.firstChunk() + e.chunkCount() <= from) {
                continue;
            }
            if (level > 0) {
                if (!walk(
                        e.ref(),
                        level - 1,
                        e.firstChunk(),
                        e.chunkCount(),
                        e.firstOrdinal(),
                        e.caseCount(),
                        from,
                        deadline,
                        visitor)) {
                    return false;
                }
            } else if (!visitor.visit(new ChunkRef(e.firstChunk(), e.ref(), e.firstOrdinal(), (int) e.caseCount()))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Reads and decodes one chunk file and checks it against the reference the index (or an execution row) gave.
     *
     * @throws DamagedException when the file is missing, altered, invalid, or not the chunk {@code chunk} names
     */
    public static ChunkFile readChunk(UUID runId, ChunkRef chunk, ObjectReader store, Deadline deadline) {
        ChunkFile c = decode(runId, chunk.ref(), () -> ChunkFile.decode(read(runId, store, chunk.ref(), deadline)));
        if (!c.runId().equals(runId)
                || c.chunkIndex() != chunk.chunkIndex()
                || c.firstOrdinal() != chunk.firstOrdinal()
                || c.cases().size() != chunk.caseCount()) {
            throw PlanErrors.damaged(
                    runId, "plan file " + chunk.ref().key() + " is not chunk " + chunk.chunkIndex() + " of the run");
        }
        return c;
    }

    /** The settlement fold of a shard's chunks (docs/formats/plan-layout.md, "Folds"), fed in chunk order. */
    public static final class SettlementFold {
        private final Fold fold = new Fold();
        private long chunks;
        private long cases;

        public void add(long chunkIndex, UUID chunkId, int caseCount, Sha256 membership) {
            fold.addChunk(chunkIndex, chunkId, caseCount, membership);
            chunks++;
            cases += caseCount;
        }

        public long chunks() {
            return chunks;
        }

        public long cases() {
            return cases;
        }

        /** The fold's value; call once. */
        public Sha256 finish() {
            return fold.finish();
        }
    }

    /** The deterministic id of chunk {@code chunkIndex} of run {@code runId}. */
    public static UUID chunkId(UUID runId, long chunkIndex) {
        return Fold.chunkId(runId, chunkIndex);
    }

    /** The shard of chunk {@code chunkIndex}. */
    public static int shardOf(long chunkIndex) {
        return PlanShape.shardOf(chunkIndex);
    }

    private static byte[] read(UUID runId, ObjectReader store, ObjectRef ref, Deadline deadline) {
        try {
            return store.read(ref, deadline);
        } catch (ObjectNotFoundException e) {
            throw PlanErrors.damaged(
                    runId, "plan file " + ref.key() + " is missing from " + store.binding() + "; create a new run", e);
        } catch (ObjectIntegrityException e) {
            throw PlanErrors.damaged(
                    runId,
                    "plan file " + ref.key() + " was altered after publication (" + e.getMessage()
                            + "); the run cannot execute over it, create a new run",
                    e);
        }
    }

    private static <T> T decode(UUID runId, ObjectRef ref, Supplier<T> decoder) {
        try {
            return decoder.get();
        } catch (PlanJson.FormatException e) {
            throw PlanErrors.damaged(runId, "plan file " + ref.key() + " is invalid: " + e.getMessage(), e);
        }
    }
}
