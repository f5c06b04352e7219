package dev.vigilo.plan;

import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectNotFoundException;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.Sha256;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The publication pass: reads every file reachable from a manifest through its reference (length and SHA-256),
 * decodes each with its format's parser, and checks the links between them against the expected run, dataset,
 * profile and totals. Chunk files are read and checked on {@link #READ_THREADS} threads, up to {@link #READ_AHEAD}
 * ahead of the walk, which takes their results in chunk order, so the first bad file in walk order is the one
 * reported. Holds one index path (at most 8 documents) and the chunk files in flight.
 */
final class PlanVerifier {
    static final int READ_AHEAD = 32;
    /**
     * Threads reading and checking chunk files. Reads, not decoding, set the number: against a remote store each read
     * waits a round trip, so as many run at once as preparation's transfers ({@link GroupWriter#TRANSFERS}); on a
     * local store the surplus threads only share the cores.
     */
    static final int READ_THREADS = GroupWriter.TRANSFERS;

    private static final Duration READ = Duration.ofSeconds(120);
    private final ObjectStore store;
    private final UUID runId;
    private final Deque<Future<?>> chunks = new ArrayDeque<>();
    private ExecutorService pool;
    private long files;
    private long nextChunk;

    PlanVerifier(ObjectStore store, UUID runId) {
        this.store = store;
        this.runId = runId;
    }

    /** @return the number of files reachable from the root, the root included */
    long verify(ObjectRef root, DatasetEntry dataset, Profile profile) {
        PlanManifest m = decode(root, () -> PlanManifest.decode(read(root)));
        check(
                root,
                m.runId().equals(runId)
                        && m.datasetUploadId().equals(dataset.uploadId())
                        && m.membershipUuid().equals(dataset.membershipUuid())
                        && m.sourceSha256().equals(dataset.sourceSha256())
                        && m.cases() == dataset.caseCount()
                        && m.chunks() == Planner.expectedChunks(dataset.caseCount())
                        && m.gateCount() == profile.gates().size(),
                "does not describe this run, dataset and profile");
        Sha256 profileSha = ProfileJson.sha256(profile);
        decode(m.configuration(), () -> PlanConfiguration.decode(read(m.configuration()), runId, profileSha));
        ObjectRef gate = m.gateHead();
        for (int g = 0; g < m.gateCount(); g++) {
            ObjectRef at = gate;
            int index = g;
            GateFile gf = decode(at, () -> GateFile.decode(read(at), runId, index));
            check(
                    at,
                    gf.gate().name().equals(profile.gates().get(g).name()) && gf.gateCount() == m.gateCount(),
                    "is not gate " + g + " of the profile");
            gate = gf.next().orElse(null);
        }
        nextChunk = 0;
        pool = Executors.newFixedThreadPool(READ_THREADS, Threads.daemonFactory("plan-verify"));
        try {
            walk(m.chunkIndexRoot(), m.chunkIndexLevels() - 1, 0, m.chunks(), 0, m.cases());
            while (!chunks.isEmpty()) {
                join(chunks.removeFirst());
            }
        } finally {
            for (Future<?> f : chunks) {
                f.cancel(true);
            }
            chunks.clear();
            pool.shutdownNow();
        }
        check(root, nextChunk == m.chunks(), "chunk index reaches " + nextChunk + " chunks");
        return files;
    }

    private void walk(ObjectRef ref, int level, long firstChunk, long chunkCount, long firstOrdinal, long caseCount) {
        ChunkIndexDocument doc = decode(
                ref,
                () -> ChunkIndexDocument.decode(read(ref), level, firstChunk, chunkCount, firstOrdinal, caseCount));
        for (ChunkIndexDocument.Entry e : doc.entries()) {
            if (level > 0) {
                walk(e.ref(), level - 1, e.firstChunk(), e.chunkCount(), e.firstOrdinal(), e.caseCount());
            } else {
                long expected = nextChunk++;
                files++;
                while (chunks.size() >= READ_AHEAD) {
                    join(chunks.removeFirst());
                }
                chunks.addLast(pool.submit(() -> {
                    ChunkFile c = decode(e.ref(), () -> ChunkFile.decode(fetch(e.ref())));
                    check(
                            e.ref(),
                            c.runId().equals(runId)
                                    && c.chunkIndex() == expected
                                    && c.firstOrdinal() == e.firstOrdinal()
                                    && c.cases().size() == e.caseCount()
                                    && e.ref().key().equals(PlanLayout.chunk(runId, expected)),
                            "is not chunk " + expected);
                    return null;
                }));
            }
        }
    }

    private byte[] read(ObjectRef ref) {
        files++;
        return fetch(ref);
    }

    private static void join(Future<?> f) {
        Futures.join(f, "publication was interrupted");
    }

    /** Reads and verifies one file; thread-safe (chunk files are fetched on the pool). */
    private byte[] fetch(ObjectRef ref) {
        try {
            return store.read(ref, Deadline.after(READ));
        } catch (ObjectNotFoundException e) {
            throw PlanErrors.damaged(
                    runId,
                    "plan file " + ref.key() + " is missing from " + store.binding() + "; the plan cannot be published",
                    e);
        } catch (ObjectIntegrityException e) {
            throw PlanErrors.damaged(
                    runId,
                    "plan file " + ref.key() + " was altered (" + e.getMessage() + "); the plan cannot be published",
                    e);
        }
    }

    private <T> T decode(ObjectRef ref, java.util.function.Supplier<T> decoder) {
        try {
            return decoder.get();
        } catch (PlanJson.FormatException e) {
            throw PlanErrors.damaged(runId, "plan file " + ref.key() + " is invalid: " + e.getMessage(), e);
        }
    }

    private void check(ObjectRef ref, boolean ok, String what) {
        if (!ok) {
            throw PlanErrors.damaged(runId, "plan file " + ref.key() + " " + what);
        }
    }
}
