package dev.vigilo.plan;

import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.dataset.CaseFold;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectNotFoundException;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A resume's shortcut over the acknowledged prefix: instead of reading the dataset's first cases again, it reads the
 * chunk files an earlier attempt of the run acknowledged (chunks {@code [0, cursor)}), each through the reference
 * its ownership row recorded (length and SHA-256) and decoded with its format's parser, and hands them to the
 * {@link Planner} in chunk order, while folding their cases' ordinals, ids and hashes into the dataset identity
 * fold that the dataset pass then continues ({@code DatasetReader.readVerifiedFrom}). The plan's bytes and the
 * identity check are those of a full pass: the chunk files record exactly what the planner derived from those cases.
 *
 * <p>Reads run on {@link #READ_THREADS} threads, a bounded number ahead of the one being applied; rows are read in
 * pages. Memory: one page of references and the decoded chunks in flight. Not thread-safe.
 */
final class ChunkRestore {
    /** Chunk files read ahead of the one being applied. */
    static final int READ_AHEAD = 16;
    /**
     * Threads reading chunk files. Reads, not decoding, set the number: against a remote store each read waits a
     * round trip, so as many run at once as are read ahead; on a local store the surplus threads only share the cores.
     */
    static final int READ_THREADS = READ_AHEAD;

    private static final int PAGE = 1024;
    private static final Duration READ = Duration.ofSeconds(120);

    private final ObjectStore store;
    private final PlanFiles planFiles;
    private final PreparationOptions options;
    private final long caseCount;

    ChunkRestore(ObjectStore store, PlanFiles planFiles, PreparationOptions options, long caseCount) {
        this.store = Objects.requireNonNull(store, "store");
        this.planFiles = Objects.requireNonNull(planFiles, "planFiles");
        this.options = Objects.requireNonNull(options, "options");
        this.caseCount = caseCount;
    }

    /**
     * Restores chunks {@code [0, cursor)} into {@code planner} and {@code identity}.
     *
     * @return the number of chunks restored (the cursor)
     */
    long restore(long cursor, Planner planner, CaseFold identity) {
        ExecutorService pool = Executors.newFixedThreadPool(READ_THREADS, Threads.daemonFactory("plan-restore"));
        Deque<Future<Restored>> ahead = new ArrayDeque<>();
        try {
            long next = 0;
            while (next < cursor) {
                List<PlanFiles.AcknowledgedChunk> page = planFiles.acknowledgedChunks(next, cursor, PAGE);
                if (page.isEmpty() || page.get(0).chunkIndex() != next) {
                    throw PlanErrors.damaged(
                            planFiles.runId(),
                            "chunk " + next + " is below the chunk cursor " + cursor
                                    + " but has no acknowledged file; create a new run");
                }
                for (PlanFiles.AcknowledgedChunk chunk : page) {
                    if (chunk.chunkIndex() != next) {
                        throw PlanErrors.damaged(
                                planFiles.runId(),
                                "chunk " + next + " is below the chunk cursor " + cursor
                                        + " but has no acknowledged file; create a new run");
                    }
                    while (ahead.size() >= READ_AHEAD) {
                        apply(join(ahead.removeFirst()), planner, identity);
                    }
                    ahead.addLast(pool.submit(() -> read(chunk)));
                    next++;
                }
            }
            while (!ahead.isEmpty()) {
                apply(join(ahead.removeFirst()), planner, identity);
            }
            return cursor;
        } finally {
            for (Future<Restored> f : ahead) {
                f.cancel(true);
            }
            pool.shutdownNow();
        }
    }

    /** A decoded chunk file and its cases encoded for the folds they enter. */
    private record Restored(ChunkFile file, ObjectRef ref, CaseFold.Batch entries) {}

    /** On a reading thread: reads, verifies and decodes one acknowledged chunk file. */
    private Restored read(PlanFiles.AcknowledgedChunk chunk) {
        ObjectRef ref = chunk.ref();
        byte[] bytes;
        try {
            bytes = store.read(ref, Deadline.after(READ));
        } catch (ObjectNotFoundException e) {
            throw PlanErrors.damaged(
                    planFiles.runId(),
                    "acknowledged plan file " + ref.key() + " is missing from " + store.binding()
                            + "; create a new run",
                    e);
        } catch (ObjectIntegrityException e) {
            throw PlanErrors.damaged(
                    planFiles.runId(),
                    "plan file " + ref.key() + " failed verification: " + e.getMessage()
                            + "; the stored copy was altered, create a new run",
                    e);
        }
        ChunkFile file;
        try {
            file = ChunkFile.decode(bytes);
        } catch (PlanJson.FormatException e) {
            throw PlanErrors.damaged(planFiles.runId(), "plan file " + ref.key() + " is invalid: " + e.getMessage(), e);
        }
        long first = chunk.chunkIndex() * PlanShape.CHUNK_CASES;
        long expectedCases = Math.min(PlanShape.CHUNK_CASES, caseCount - first);
        if (!file.runId().equals(planFiles.runId())
                || file.chunkIndex() != chunk.chunkIndex()
                || file.firstOrdinal() != first
                || file.cases().size() != expectedCases
                || !ref.key().equals(PlanLayout.chunk(planFiles.runId(), chunk.chunkIndex()))) {
            throw PlanErrors.damaged(
                    planFiles.runId(),
                    "plan file " + ref.key() + " is not chunk " + chunk.chunkIndex() + " of the run");
        }
        CaseFold.Batch entries = new CaseFold.Batch();
        for (ChunkFile.Entry e : file.cases()) {
            entries.add(e.ordinal(), e.id(), e.sha256());
        }
        return new Restored(file, ref, entries);
    }

    /** On the creator's thread, in chunk order. */
    private void apply(Restored restored, Planner planner, CaseFold identity) {
        if (Thread.currentThread().isInterrupted()) {
            throw new CancelledException("preparation of run " + planFiles.runId() + " was cancelled");
        }
        planFiles.renewIfDue(options.renewInterval());
        identity.addAll(restored.entries());
        planner.restoreChunk(restored.file(), restored.ref(), restored.entries());
    }

    private Restored join(Future<Restored> f) {
        return Futures.join(f, "preparation of run " + planFiles.runId() + " was cancelled");
    }
}
