package dev.vigilo.dataset;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.util.List;
import java.util.Objects;

/**
 * Builds the dataset's multi-level index while case files stream past: the shape is {@link IndexTreeBuilder}'s
 * (at most {@link DatasetLimits#MAX_INDEX_LEVELS} levels, one open document per level), each document is an
 * {@link IndexDocument} created under its content address once everything it references is durable. Not
 * thread-safe.
 */
final class IndexBuilder {
    /** The finished index. */
    record Root(ObjectRef ref, int levels, long caseCount) {}

    private final ObjectWriter writer;
    private final IndexTreeBuilder<IndexEntry> tree;

    IndexBuilder(ObjectWriter writer, int maxEntries) {
        this.writer = Objects.requireNonNull(writer, "writer");
        this.tree = new IndexTreeBuilder<>(
                maxEntries,
                DatasetLimits.MAX_INDEX_LEVELS,
                this::write,
                () -> new InvalidInputException("the dataset needs more than " + DatasetLimits.MAX_INDEX_LEVELS
                        + " index levels; split it into several datasets"));
    }

    /** Adds a case file, in ordinal order. */
    void addCaseFile(ObjectRef ref, long firstOrdinal, long caseCount) {
        tree.add(new IndexEntry(ref, firstOrdinal, caseCount));
    }

    /** Writes the open documents and returns the root. At least one case file must have been added. */
    Root finish() {
        IndexTreeBuilder.Root<IndexEntry> root = tree.finish();
        return new Root(root.entry().ref(), root.levels(), root.entry().caseCount());
    }

    private IndexEntry write(int level, List<IndexEntry> entries) {
        IndexDocument doc = IndexDocument.of(level, entries);
        byte[] bytes = doc.encode();
        if (bytes.length > DatasetLimits.INDEX_MAX_BYTES) {
            throw new IllegalStateException("index document of " + bytes.length + " bytes exceeds the format's bound");
        }
        ObjectKey key = DatasetKeys.indexDocument(Sha256.of(bytes));
        // Children first: the document is created only once everything it references is durable.
        ObjectRef ref = writer.createNow(key, bytes);
        return new IndexEntry(ref, doc.firstOrdinal(), doc.caseCount());
    }
}
