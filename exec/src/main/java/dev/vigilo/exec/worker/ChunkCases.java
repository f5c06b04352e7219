package dev.vigilo.exec.worker;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.dataset.CaseFileSpan;
import dev.vigilo.dataset.CaseFold;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.StoredCase;
import dev.vigilo.plan.PlanShape;
import dev.vigilo.storage.Sha256;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The dataset cases of one claimed chunk, verified before execution starts (docs/execution-reads.md).
 *
 * <p>{@link #open} reads only the case files covering the chunk's ordinal range (each checked completely by the
 * {@link DatasetReader}), compares every case's ordinal, id and hash with the chunk's list, and folds the cases
 * into the chunk's membership digest; nothing is handed out unless all of it agrees. Then:
 * <ul>
 *   <li>when the covering files' encoded size is within the resident-byte budget, the cases stay in memory (at
 *       most {@link PlanShape#CHUNK_CASES}) and {@link #forEach} iterates them;</li>
 *   <li>otherwise nothing is retained, and {@link #forEach} reads the immutable case files again one at a time,
 *       checking each case against the chunk's list again before passing it on. A single file larger than the
 *       budget is still read whole: a file is the smallest unit that can be verified, and the format bounds it
 *       (about 8 MiB).</li>
 * </ul>
 *
 * <p>Errors: a case that differs from the chunk's list, or a fold that differs from its membership digest, is a
 * {@link DamagedException} naming the chunk and the case; a damaged dataset file is the reader's
 * {@code DatasetDamagedException}; storage failures (timeout, cancellation, unavailable store) propagate
 * unchanged, for the chunk retry path. Not thread-safe, like the reader it uses.
 */
final class ChunkCases {
    /** Resident-byte budget of one assignment's case files unless configured otherwise. */
    static final long DEFAULT_RESIDENT_BYTES = 16L * 1024 * 1024;

    private final ChunkMembership chunk;
    private final DatasetReader reader;
    private final List<CaseFileSpan> files;
    private final long encodedBytes;
    /** The verified cases when they fit the budget; null when {@link #forEach} re-reads the files. */
    private final List<StoredCase> resident;

    private ChunkCases(
            ChunkMembership chunk,
            DatasetReader reader,
            List<CaseFileSpan> files,
            long encodedBytes,
            List<StoredCase> resident) {
        this.chunk = chunk;
        this.reader = reader;
        this.files = files;
        this.encodedBytes = encodedBytes;
        this.resident = resident;
    }

    /**
     * Reads and verifies the chunk's cases from the dataset {@code reader} reads (a reader over the worker's
     * cache, typically).
     *
     * @param residentBudgetBytes the most encoded case-file bytes whose cases may stay in memory, {@code >= 0}
     * @throws DamagedException when the dataset's cases disagree with the chunk, or the chunk's range lies outside
     *                          the dataset
     */
    static ChunkCases open(ChunkMembership chunk, DatasetReader reader, long residentBudgetBytes) {
        Objects.requireNonNull(chunk, "chunk");
        Objects.requireNonNull(reader, "reader");
        if (residentBudgetBytes < 0) {
            throw new IllegalArgumentException("the resident-byte budget must be >= 0, got " + residentBudgetBytes);
        }
        long caseCount = reader.entry().caseCount();
        if (chunk.firstOrdinal() + chunk.size() > caseCount) {
            throw new DamagedException(chunk.describe() + " lists ordinals [" + chunk.firstOrdinal() + ", "
                    + (chunk.firstOrdinal() + chunk.size()) + "), but dataset "
                    + reader.entry().uploadId()
                    + " holds " + caseCount + " cases; the plan does not belong to this dataset");
        }
        List<CaseFileSpan> files = reader.caseFilesInRange(chunk.firstOrdinal(), chunk.size());
        long encoded = 0;
        for (CaseFileSpan f : files) {
            encoded += f.ref().length();
        }
        List<StoredCase> resident = encoded <= residentBudgetBytes ? new ArrayList<>(chunk.size()) : null;
        CaseFold fold = new CaseFold();
        Checker checker = new Checker(chunk);
        reader.forEachCaseInRange(chunk.firstOrdinal(), chunk.size(), c -> {
            checker.check(c);
            fold.add(c.ordinal(), c.id(), c.sha256());
            if (resident != null) {
                resident.add(c);
            }
        });
        checker.checkComplete();
        Sha256 folded = fold.finish();
        if (!folded.equals(chunk.membership())) {
            throw new DamagedException(chunk.describe() + ": the dataset's cases fold to " + folded
                    + ", the chunk's membership digest is " + chunk.membership()
                    + "; the chunk file and the dataset disagree");
        }
        return new ChunkCases(chunk, reader, List.copyOf(files), encoded, resident);
    }

    /**
     * Passes every case of the chunk to {@code action}, in ordinal order. May be called more than once.
     *
     * @throws DamagedException when a re-read case no longer matches the chunk's list
     */
    void forEach(Consumer<StoredCase> action) {
        Objects.requireNonNull(action, "action");
        if (resident != null) {
            resident.forEach(action);
            return;
        }
        Checker checker = new Checker(chunk);
        for (CaseFileSpan file : files) {
            reader.forEachCaseInFile(file, chunk.firstOrdinal(), chunk.size(), c -> {
                checker.check(c);
                action.accept(c);
            });
        }
        checker.checkComplete();
    }

    /** The chunk these cases belong to. */
    ChunkMembership chunk() {
        return chunk;
    }

    /** Whether the cases are held in memory (true) or re-read from the files on each {@link #forEach} (false). */
    boolean resident() {
        return resident != null;
    }

    /** Total encoded size of the case files covering the chunk, in bytes. */
    long encodedBytes() {
        return encodedBytes;
    }

    /** The case files covering the chunk, in ordinal order. */
    List<CaseFileSpan> files() {
        return files;
    }

    /** Compares the cases of one pass, in order, with the chunk's list. */
    private static final class Checker {
        private final ChunkMembership chunk;
        private int next;

        Checker(ChunkMembership chunk) {
            this.chunk = chunk;
        }

        void check(StoredCase c) {
            if (next >= chunk.size()) {
                throw new DamagedException(chunk.describe() + ": the dataset passed case " + c.ordinal() + " (\""
                        + c.id() + "\") beyond the chunk's " + chunk.size() + " cases");
            }
            ChunkMembership.Case expected = chunk.cases().get(next++);
            if (c.ordinal() != expected.ordinal()
                    || !c.id().equals(expected.id())
                    || !c.sha256().equals(expected.sha256())) {
                throw new DamagedException(chunk.describe() + " case " + expected.ordinal() + " (\"" + expected.id()
                        + "\", SHA-256 " + expected.sha256() + ") differs from the dataset's case " + c.ordinal()
                        + " (\"" + c.id() + "\", SHA-256 " + c.sha256()
                        + "); the chunk file and the dataset disagree");
            }
        }

        void checkComplete() {
            if (next != chunk.size()) {
                throw new DamagedException(chunk.describe() + ": the dataset passed " + next + " of the chunk's "
                        + chunk.size() + " cases");
            }
        }
    }
}
