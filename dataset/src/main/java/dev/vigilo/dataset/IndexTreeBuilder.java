package dev.vigilo.dataset;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Builds a multi-level index bottom-up while its leaf entries stream past, in order: the one tree-shaping core behind
 * the dataset index (docs/formats/dataset.md) and the plan's chunk index (docs/formats/plan-index.md). What an entry
 * and a document are is the caller's: a {@link DocumentWriter} turns one document's entries into bytes, writes them
 * and returns the entry that references the document one level up.
 *
 * <p>Shape, for {@code n} leaf entries and fan-out {@code m}: the level-0 documents are the consecutive runs of
 * {@code m} leaf entries (the last run may be shorter); the level-L documents are the consecutive runs of {@code m}
 * level-(L-1) documents; the first level with a single document holds the root. So the root has at least two
 * entries unless it is the only level-0 document, equal inputs give equal trees, and {@code levels} is the root's
 * level + 1.
 *
 * <p>Order and memory: a document is written only after every document it references was written, so a writer that
 * creates objects in call order creates children first. At most one open document per level is held (at most
 * {@code maxLevels x maxEntries} entries). A full document is written when the next entry for its level arrives (or
 * by {@link #finish()}), which lets the final top level become the root without an extra level above it. Not
 * thread-safe.
 *
 * @param <E> the entry type: a reference to a child (a leaf object at level 0, a document of level L-1 at level L)
 */
public final class IndexTreeBuilder<E> {
    /** Writes one document of the index. */
    @FunctionalInterface
    public interface DocumentWriter<E> {
        /**
         * Writes the document of {@code level} holding {@code entries} (1 to maxEntries, in order, unmodifiable) and
         * returns the entry that references it from level {@code level + 1}.
         */
        E write(int level, List<E> entries);
    }

    /**
     * The finished index.
     *
     * @param entry  the entry referencing the root document (as its parent would hold it)
     * @param levels the number of document levels: the root's level + 1
     */
    public record Root<E>(E entry, int levels) {
        public Root {
            Objects.requireNonNull(entry, "entry");
        }
    }

    private final int maxEntries;
    private final int maxLevels;
    private final DocumentWriter<E> writer;
    private final Supplier<? extends RuntimeException> tooDeep;
    private final List<List<E>> open = new ArrayList<>();

    /**
     * @param maxEntries most entries per document, at least 2
     * @param maxLevels  most document levels, at least 1
     * @param writer     writes each document, children before parents
     * @param tooDeep    the failure to throw when the entries need more than {@code maxLevels} levels
     */
    public IndexTreeBuilder(
            int maxEntries, int maxLevels, DocumentWriter<E> writer, Supplier<? extends RuntimeException> tooDeep) {
        if (maxEntries < 2) {
            throw new IllegalArgumentException(
                    "an index document needs room for at least 2 entries, got " + maxEntries);
        }
        if (maxLevels < 1) {
            throw new IllegalArgumentException("an index needs at least 1 level, got " + maxLevels);
        }
        this.maxEntries = maxEntries;
        this.maxLevels = maxLevels;
        this.writer = Objects.requireNonNull(writer, "writer");
        this.tooDeep = Objects.requireNonNull(tooDeep, "tooDeep");
    }

    /**
     * Adds the next leaf entry, in order. May write documents that became complete.
     *
     * @throws RuntimeException the {@code tooDeep} failure when the index would need more than maxLevels levels
     */
    public void add(E leaf) {
        add(0, Objects.requireNonNull(leaf, "leaf"));
    }

    private void add(int level, E entry) {
        if (level >= maxLevels) {
            throw tooDeep.get();
        }
        while (open.size() <= level) {
            open.add(new ArrayList<>());
        }
        List<E> entries = open.get(level);
        if (entries.size() == maxEntries) {
            E written = write(level, entries);
            add(level + 1, written);
        }
        entries.add(entry);
    }

    /**
     * Writes the open documents from the bottom up and returns the root. Call once, after at least one leaf.
     *
     * @throws RuntimeException the {@code tooDeep} failure when the index would need more than maxLevels levels
     */
    public Root<E> finish() {
        if (open.isEmpty()) {
            throw new IllegalStateException("an index needs at least one leaf entry");
        }
        for (int level = 0; ; level++) {
            List<E> entries = open.get(level);
            if (level == open.size() - 1) {
                return new Root<>(write(level, entries), level + 1);
            }
            if (!entries.isEmpty()) {
                add(level + 1, write(level, entries));
            }
        }
    }

    /** Writes the level's open document and empties it. */
    private E write(int level, List<E> entries) {
        E written = Objects.requireNonNull(writer.write(level, List.copyOf(entries)), "written entry");
        entries.clear();
        return written;
    }
}
