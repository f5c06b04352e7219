package dev.vigilo.dataset;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Builds the multi-level index bottom-up while case files stream past, holding at most one open document per
 * level (at most {@link DatasetLimits#MAX_INDEX_LEVELS} x {@link DatasetLimits#INDEX_MAX_ENTRIES} entries in
 * memory). A full level-L document is written (after its children are durable) when the next entry for its level
 * arrives, and referenced from level L+1.
 * {@link #finish()} closes the open documents from the bottom up; the single document at the highest level is the
 * root. Not thread-safe.
 */
final class IndexBuilder {
    /** The finished index. */
    record Root(ObjectRef ref, int levels, long caseCount) {}

    private final ObjectWriter writer;
    private final int maxEntries;
    private final List<List<IndexEntry>> open = new ArrayList<>();

    IndexBuilder(ObjectWriter writer, int maxEntries) {
        this.writer = Objects.requireNonNull(writer, "writer");
        this.maxEntries = maxEntries;
    }

    /** Adds a case file, in ordinal order. */
    void addCaseFile(ObjectRef ref, long firstOrdinal, long caseCount) {
        add(0, new IndexEntry(ref, firstOrdinal, caseCount));
    }

    private void add(int level, IndexEntry entry) {
        if (level >= DatasetLimits.MAX_INDEX_LEVELS) {
            throw new InvalidInputException("the dataset needs more than " + DatasetLimits.MAX_INDEX_LEVELS
                    + " index levels; split it into several datasets");
        }
        while (open.size() <= level) {
            open.add(new ArrayList<>());
        }
        List<IndexEntry> entries = open.get(level);
        // A full level is written only when one more entry arrives, so the final top level can become the root
        // without an extra level above it.
        if (entries.size() == maxEntries) {
            IndexEntry written = write(level, entries);
            entries.clear();
            add(level + 1, written);
        }
        entries.add(entry);
    }

    /** Writes the open documents and returns the root. At least one case file must have been added. */
    Root finish() {
        if (open.isEmpty()) {
            throw new IllegalStateException("an index needs at least one case file");
        }
        for (int level = 0; ; level++) {
            List<IndexEntry> entries = open.get(level);
            boolean top = level == open.size() - 1;
            if (top) {
                IndexEntry root = write(level, entries);
                return new Root(root.ref(), level + 1, root.caseCount());
            }
            if (!entries.isEmpty()) {
                IndexEntry written = write(level, entries);
                entries.clear();
                add(level + 1, written);
            }
        }
    }

    private IndexEntry write(int level, List<IndexEntry> entries) {
        IndexDocument doc = IndexDocument.of(level, entries);
        byte[] bytes = doc.encode();
        if (bytes.length > DatasetLimits.INDEX_MAX_BYTES) {
            throw new IllegalStateException("index document of " + bytes.length + " bytes exceeds the format's bound");
        }
        ObjectKey key = DatasetKeys.indexDocument(dev.vigilo.storage.Sha256.of(bytes));
        // Children first: the document is created only once everything it references is durable.
        ObjectRef ref = writer.createNow(key, bytes);
        return new IndexEntry(ref, doc.firstOrdinal(), doc.caseCount());
    }
}
