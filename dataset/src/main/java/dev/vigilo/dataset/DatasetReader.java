package dev.vigilo.dataset;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectNotFoundException;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Reads a finalized dataset's cases in submitted order, verifying every byte on the way: each object against its
 * reference (length and SHA-256), each index document's structure and ordinal tiling, each case file completely
 * (header, every record's ordinal, hash and id, including records outside a requested range) before any of its
 * cases is passed on. A whole traversal also checks the case count and membership fold against the catalog entry
 * ({@link #readVerified}).
 *
 * <p>Range reads ({@link #forEachCaseInRange}, {@link #caseFilesInRange}) read only the index documents and case
 * files whose ordinal ranges overlap the requested range. Memory stays bounded whatever the dataset's size: one
 * path of index documents (at most {@link DatasetLimits#MAX_INDEX_LEVELS}, each at most
 * {@link DatasetLimits#INDEX_MAX_BYTES}) and one decoded case file.
 *
 * <p>Objects are read through an {@link ObjectReader} whose binding must be the dataset's store: the
 * {@link ObjectStore} itself, or a {@link dev.vigilo.storage.CachingObjectReader} over it. Each object read has a
 * 120-second deadline and honours thread interruption. Storage failures other than a missing or damaged object
 * (timeouts, cancellation, an unavailable store) propagate as the storage module's exceptions. Not thread-safe;
 * open one reader per traversal.
 */
public final class DatasetReader {
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(120);

    private final DatasetEntry entry;
    private final ObjectReader store;
    private final CaseLineParser caseParser = new CaseLineParser(DatasetLimits.MAX_CASE_BYTES);
    private long caseFiles;
    private long indexDocuments;
    private long bytesRead;

    private DatasetReader(DatasetEntry entry, ObjectReader store) {
        this.entry = entry;
        this.store = store;
    }

    /**
     * Opens a reader of {@code entry}'s files in {@code store}.
     *
     * @throws InvalidInputException when {@code store} is not the store the dataset was written to
     */
    public static DatasetReader open(DatasetEntry entry, ObjectStore store) {
        return open(entry, (ObjectReader) store);
    }

    /**
     * Opens a reader of {@code entry}'s files through {@code reader}, for example a cache shared by a worker's
     * reads.
     *
     * @throws InvalidInputException when {@code reader}'s binding is not the store the dataset was written to
     */
    public static DatasetReader open(DatasetEntry entry, ObjectReader reader) {
        Objects.requireNonNull(entry, "entry");
        Objects.requireNonNull(reader, "reader");
        if (!reader.binding().equals(entry.storage())) {
            throw new InvalidInputException("dataset " + entry.uploadId() + " is stored in " + entry.storage()
                    + ", but the configured store is " + reader.binding()
                    + "; point --storage-config at a configuration with a store bound to " + entry.storage());
        }
        return new DatasetReader(entry, reader);
    }

    /** The catalog entry this reader reads. */
    public DatasetEntry entry() {
        return entry;
    }

    /**
     * Calls {@code consumer} with every case, in ordinal order, each verified before it is passed on.
     *
     * @throws DatasetDamagedException on the first object that is missing or inconsistent
     */
    public void forEachCase(Consumer<StoredCase> consumer) {
        Objects.requireNonNull(consumer, "consumer");
        traverse(0, entry.caseCount(), file -> readCaseFile(file, 0, entry.caseCount(), consumer));
    }

    /**
     * Calls {@code consumer} with the cases of ordinals {@code [firstOrdinal, firstOrdinal + count)}, in ordinal
     * order. Reads only the index documents and case files overlapping the range; each case file it touches is
     * verified completely, including its records outside the range, before any of its cases is passed on.
     *
     * @throws InvalidInputException   when {@code count < 1} or the range does not lie within the dataset's cases
     * @throws DatasetDamagedException on the first touched object that is missing or inconsistent
     */
    public void forEachCaseInRange(long firstOrdinal, long count, Consumer<StoredCase> consumer) {
        Objects.requireNonNull(consumer, "consumer");
        checkRange(firstOrdinal, count);
        traverse(firstOrdinal, count, file -> readCaseFile(file, firstOrdinal, count, consumer));
    }

    /**
     * The case files holding ordinals {@code [firstOrdinal, firstOrdinal + count)}, in ordinal order, found by
     * reading (and verifying) only the index documents overlapping the range; no case file is read. The list has
     * one element per file, so at most {@code count} elements. A caller sums their lengths to budget its memory
     * before reading them with {@link #forEachCaseInFile}.
     *
     * @throws InvalidInputException   when {@code count < 1} or the range does not lie within the dataset's cases
     * @throws DatasetDamagedException on the first touched index document that is missing or inconsistent
     */
    public List<CaseFileSpan> caseFilesInRange(long firstOrdinal, long count) {
        checkRange(firstOrdinal, count);
        List<CaseFileSpan> files = new ArrayList<>();
        traverse(firstOrdinal, count, files::add);
        return files;
    }

    /**
     * Reads one case file of this dataset (as {@link #caseFilesInRange} returned it), verifies it completely and
     * calls {@code consumer} with its cases within {@code [firstOrdinal, firstOrdinal + count)}, in ordinal order.
     *
     * @throws InvalidInputException   when {@code count < 1} or the range does not overlap {@code file}
     * @throws DatasetDamagedException when the file is missing or inconsistent with {@code file}'s range
     */
    public void forEachCaseInFile(CaseFileSpan file, long firstOrdinal, long count, Consumer<StoredCase> consumer) {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(consumer, "consumer");
        if (count < 1 || firstOrdinal >= file.endOrdinal() || firstOrdinal + count <= file.firstOrdinal()) {
            throw new InvalidInputException(
                    "ordinal range " + describe(firstOrdinal, count) + " does not overlap case file "
                            + file.ref().key() + " " + describe(file.firstOrdinal(), file.caseCount()) + " of dataset "
                            + entry.uploadId());
        }
        readCaseFile(file, firstOrdinal, count, consumer);
    }

    /**
     * Reads everything and checks the case count and the membership fold against the catalog entry.
     *
     * @throws DatasetDamagedException naming the first damaged object (or the root, for a fold mismatch)
     */
    public VerifyReport verify() {
        return readVerified(c -> {});
    }

    /**
     * Passes every case to {@code consumer} in ordinal order, like {@link #forEachCase}, while folding the ordered
     * case id/hash identity; at the end checks the case count and the membership UUID against the catalog entry.
     * This is the running identity check a complete pass (such as run preparation) binds itself to: a consumer that
     * saw every case is only valid if this method returns normally.
     *
     * @throws DatasetDamagedException on the first damaged object, or at the end when the count or fold differ
     */
    public VerifyReport readVerified(Consumer<StoredCase> consumer) {
        Objects.requireNonNull(consumer, "consumer");
        CaseFold fold = new CaseFold();
        forEachCase(c -> {
            fold.add(c.ordinal(), c.id(), c.sha256());
            consumer.accept(c);
        });
        if (fold.cases() != entry.caseCount()) {
            throw new DatasetDamagedException(
                    entry.indexRoot().key(),
                    "the index reaches " + fold.cases() + " cases, the catalog records " + entry.caseCount());
        }
        var membership = CaseFold.membershipUuid(fold.finish());
        if (!membership.equals(entry.membershipUuid())) {
            throw new DatasetDamagedException(
                    entry.indexRoot().key(),
                    "the case id/hash fold gives membership " + membership + ", the catalog records "
                            + entry.membershipUuid());
        }
        return new VerifyReport(fold.cases(), caseFiles, indexDocuments, bytesRead);
    }

    private void checkRange(long firstOrdinal, long count) {
        if (count < 1
                || firstOrdinal < 0
                || firstOrdinal >= entry.caseCount()
                || count > entry.caseCount() - firstOrdinal) {
            throw new InvalidInputException("ordinal range " + describe(firstOrdinal, count) + " is not within dataset "
                    + entry.uploadId() + ", which holds ordinals [0, " + entry.caseCount()
                    + "); ask for at least one case inside it");
        }
    }

    private static String describe(long firstOrdinal, long count) {
        return "[" + firstOrdinal + ", " + (firstOrdinal + count) + ")";
    }

    /**
     * Visits, in ordinal order, every case file overlapping {@code [firstOrdinal, firstOrdinal + count)}, reading
     * only the index documents on the way to them. The range lies within the catalog's case count, and the root
     * is checked to cover exactly that count, so the visited files tile the range.
     */
    private void traverse(long firstOrdinal, long count, Consumer<CaseFileSpan> visitor) {
        long end = firstOrdinal + count;
        IndexDocument root = readIndex(entry.indexRoot(), -1, 0, entry.caseCount());
        if (root.level() + 1 != entry.indexLevels()) {
            throw new DatasetDamagedException(
                    entry.indexRoot().key(),
                    "root is at level " + root.level() + ", the catalog records " + entry.indexLevels() + " levels");
        }
        // Depth-first over index documents; each frame is one document and the position of its next entry.
        Deque<Frame> path = new ArrayDeque<>();
        path.push(new Frame(root));
        while (!path.isEmpty()) {
            Frame top = path.peek();
            if (top.next == top.doc.entries().size()) {
                path.pop();
                continue;
            }
            IndexEntry child = top.doc.entries().get(top.next++);
            if (child.firstOrdinal() >= end) {
                return; // depth-first order is ordinal order: everything left lies after the range
            }
            if (child.firstOrdinal() + child.caseCount() <= firstOrdinal) {
                continue;
            }
            if (top.doc.level() == 0) {
                visitor.accept(new CaseFileSpan(child.ref(), child.firstOrdinal(), child.caseCount()));
            } else {
                path.push(new Frame(
                        readIndex(child.ref(), top.doc.level() - 1, child.firstOrdinal(), child.caseCount())));
            }
        }
    }

    /** Reads and decodes the whole file (every record is checked), then passes on the cases inside the range. */
    private void readCaseFile(CaseFileSpan file, long firstOrdinal, long count, Consumer<StoredCase> consumer) {
        byte[] bytes = read(file.ref());
        caseFiles++;
        List<StoredCase> cases =
                CaseFileFormat.decode(file.ref().key(), bytes, file.firstOrdinal(), file.caseCount(), caseParser);
        long end = firstOrdinal + count;
        for (StoredCase c : cases) {
            if (c.ordinal() >= firstOrdinal && c.ordinal() < end) {
                consumer.accept(c);
            }
        }
    }

    private IndexDocument readIndex(ObjectRef ref, int expectedLevel, long firstOrdinal, long count) {
        if (ref.length() > DatasetLimits.INDEX_MAX_BYTES) {
            throw new DatasetDamagedException(
                    ref.key(),
                    "index document of " + ref.length() + " bytes exceeds the format's bound of "
                            + DatasetLimits.INDEX_MAX_BYTES);
        }
        byte[] bytes = read(ref);
        indexDocuments++;
        return IndexDocument.decode(ref.key(), bytes, expectedLevel, firstOrdinal, count);
    }

    private byte[] read(ObjectRef ref) {
        try {
            byte[] bytes = store.read(ref, Deadline.after(READ_TIMEOUT));
            bytesRead += bytes.length;
            return bytes;
        } catch (ObjectNotFoundException e) {
            throw new DatasetDamagedException(ref.key(), "missing from " + store.binding(), e);
        } catch (ObjectIntegrityException e) {
            throw new DatasetDamagedException(ref.key(), e.getMessage(), e);
        }
    }

    private static final class Frame {
        final IndexDocument doc;
        int next;

        Frame(IndexDocument doc) {
            this.doc = doc;
        }
    }
}
