package dev.vigilo.dataset;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectNotFoundException;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Reads a finalized dataset's cases in submitted order, verifying every byte on the way: each object against its
 * reference (length and SHA-256), each index document's structure and ordinal tiling, each case against its
 * record hash and id. The traversal keeps one path of index documents (at most
 * {@link DatasetLimits#MAX_INDEX_LEVELS}, each at most {@link DatasetLimits#INDEX_MAX_BYTES}) and one case file in
 * memory, whatever the dataset's size. Not thread-safe; open one reader per traversal.
 */
public final class DatasetReader {
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(120);

    private final DatasetEntry entry;
    private final ObjectStore store;
    private long caseFiles;
    private long indexDocuments;
    private long bytesRead;

    private DatasetReader(DatasetEntry entry, ObjectStore store) {
        this.entry = entry;
        this.store = store;
    }

    /**
     * @throws InvalidInputException when {@code store} is not the store the dataset was written to
     */
    public static DatasetReader open(DatasetEntry entry, ObjectStore store) {
        Objects.requireNonNull(entry, "entry");
        Objects.requireNonNull(store, "store");
        if (!store.binding().equals(entry.storage())) {
            throw new InvalidInputException("dataset " + entry.uploadId() + " is stored in " + entry.storage()
                    + ", but the configured store is " + store.binding()
                    + "; point --storage-config at a configuration with a store bound to " + entry.storage());
        }
        return new DatasetReader(entry, store);
    }

    /**
     * Calls {@code consumer} with every case, in ordinal order, each verified before it is passed on.
     *
     * @throws DatasetDamagedException on the first object that is missing or inconsistent
     */
    public void forEachCase(Consumer<StoredCase> consumer) {
        Objects.requireNonNull(consumer, "consumer");
        CaseLineParser caseParser = new CaseLineParser(DatasetLimits.MAX_CASE_BYTES);
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
            if (top.doc.level() == 0) {
                byte[] bytes = read(child.ref());
                caseFiles++;
                for (StoredCase c : CaseFileFormat.decode(
                        child.ref().key(), bytes, child.firstOrdinal(), child.caseCount(), caseParser)) {
                    consumer.accept(c);
                }
            } else {
                path.push(new Frame(
                        readIndex(child.ref(), top.doc.level() - 1, child.firstOrdinal(), child.caseCount())));
            }
        }
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
        MembershipFold fold = new MembershipFold();
        forEachCase(c -> {
            fold.add(c.ordinal(), c.id(), c.sha256());
            consumer.accept(c);
        });
        if (fold.cases() != entry.caseCount()) {
            throw new DatasetDamagedException(
                    entry.indexRoot().key(),
                    "the index reaches " + fold.cases() + " cases, the catalog records " + entry.caseCount());
        }
        var membership = MembershipFold.membershipUuid(fold.finish());
        if (!membership.equals(entry.membershipUuid())) {
            throw new DatasetDamagedException(
                    entry.indexRoot().key(),
                    "the case id/hash fold gives membership " + membership + ", the catalog records "
                            + entry.membershipUuid());
        }
        return new VerifyReport(fold.cases(), caseFiles, indexDocuments, bytesRead);
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
