package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The index tree shape shared by the dataset index and the plan's chunk index, over generated leaf counts and
 * fan-outs, against a shape computed independently here (consecutive runs of the fan-out, level by level).
 */
class IndexTreeBuilderTest {
    /** An entry: a leaf ({@code level} -1) or a reference to the document {@code serial} of {@code level}. */
    record Ref(int level, long first, long count, int serial) {}

    /** A written document. */
    record Doc(int level, List<Ref> entries, int serial) {}

    /** Records every written document; the entry it returns covers the document's range. */
    static final class Recorder implements IndexTreeBuilder.DocumentWriter<Ref> {
        final List<Doc> docs = new ArrayList<>();

        @Override
        public Ref write(int level, List<Ref> entries) {
            int serial = docs.size();
            docs.add(new Doc(level, entries, serial));
            long count = entries.stream().mapToLong(Ref::count).sum();
            return new Ref(level, entries.get(0).first(), count, serial);
        }
    }

    static final class TooDeep extends RuntimeException {}

    /** Documents per level of the expected shape, level 0 first; the last level has one document, the root. */
    static List<Long> expectedDocumentsPerLevel(long leaves, int fanOut) {
        List<Long> perLevel = new ArrayList<>();
        long entries = leaves;
        do {
            entries = (entries + fanOut - 1) / fanOut;
            perLevel.add(entries);
        } while (entries > 1);
        return perLevel;
    }

    static IndexTreeBuilder.Root<Ref> build(int leaves, int fanOut, int maxLevels, Recorder recorder) {
        IndexTreeBuilder<Ref> tree = new IndexTreeBuilder<>(fanOut, maxLevels, recorder, TooDeep::new);
        for (int i = 0; i < leaves; i++) {
            tree.add(new Ref(-1, i, 1, i));
            // A full document is written only when the next entry for its level arrives: memory stays at one open
            // document per level, and the final top level can become the root.
            long leafDocuments =
                    recorder.docs.stream().filter(d -> d.level() == 0).count();
            assertThat(leafDocuments).isEqualTo(i / fanOut);
        }
        return tree.finish();
    }

    @Property(tries = 300)
    void theTreeIsTheConsecutiveRunsOfTheFanOutLevelByLevel(
            @ForAll @IntRange(min = 1, max = 3000) int leaves, @ForAll @IntRange(min = 2, max = 9) int fanOut) {
        Recorder recorder = new Recorder();
        IndexTreeBuilder.Root<Ref> root = build(leaves, fanOut, 64, recorder);

        List<Long> expected = expectedDocumentsPerLevel(leaves, fanOut);
        assertThat(root.levels()).isEqualTo(expected.size());
        assertThat(root.entry().level()).isEqualTo(expected.size() - 1);
        assertThat(root.entry().first()).isZero();
        assertThat(root.entry().count()).isEqualTo(leaves);
        assertThat(root.entry().serial()).isEqualTo(recorder.docs.size() - 1);

        Map<Integer, List<Doc>> byLevel = new HashMap<>();
        recorder.docs.forEach(
                d -> byLevel.computeIfAbsent(d.level(), l -> new ArrayList<>()).add(d));
        assertThat(byLevel).hasSize(expected.size());
        long below = leaves;
        for (int level = 0; level < expected.size(); level++) {
            List<Doc> docs = byLevel.get(level);
            assertThat((long) docs.size()).as("documents at level %d", level).isEqualTo(expected.get(level));
            for (int i = 0; i < docs.size(); i++) {
                int size = docs.get(i).entries().size();
                if (i < docs.size() - 1) {
                    assertThat(size)
                            .as("a document before the level's last is full")
                            .isEqualTo(fanOut);
                } else {
                    assertThat(size).as("the level's last document").isEqualTo(below - (long) fanOut * i);
                }
            }
            below = docs.size();
        }
    }

    @Property(tries = 300)
    void childrenAreWrittenBeforeTheirParentAndEveryDocumentIsReferencedOnceInOrder(
            @ForAll @IntRange(min = 1, max = 2000) int leaves, @ForAll @IntRange(min = 2, max = 7) int fanOut) {
        Recorder recorder = new Recorder();
        IndexTreeBuilder.Root<Ref> root = build(leaves, fanOut, 64, recorder);

        int[] referenced = new int[recorder.docs.size()];
        for (Doc doc : recorder.docs) {
            assertThat(doc.entries()).hasSizeBetween(1, fanOut);
            long next = doc.entries().get(0).first();
            for (Ref e : doc.entries()) {
                assertThat(e.level())
                        .as("entries of a level-L document reference level L-1")
                        .isEqualTo(doc.level() - 1);
                assertThat(e.first()).as("entries tile the document's range").isEqualTo(next);
                next += e.count();
                if (e.level() >= 0) {
                    assertThat(e.serial()).as("child written before its parent").isLessThan(doc.serial());
                    referenced[e.serial()]++;
                }
            }
        }
        referenced[root.entry().serial()]++;
        assertThat(referenced).containsOnly(1);
        // Walking the tree from the root yields the leaves in the order they were added.
        List<Long> order = new ArrayList<>();
        walk(recorder, root.entry(), order);
        assertThat(order).hasSize(leaves);
        for (int i = 0; i < leaves; i++) {
            assertThat(order.get(i)).isEqualTo(i);
        }
    }

    private static void walk(Recorder recorder, Ref ref, List<Long> order) {
        if (ref.level() < 0) {
            order.add(ref.first());
            return;
        }
        for (Ref child : recorder.docs.get(ref.serial()).entries()) {
            walk(recorder, child, order);
        }
    }

    @Property(tries = 300)
    void anIndexNeedingMoreLevelsThanAllowedFailsWithTheCallersFailure(
            @ForAll @IntRange(min = 1, max = 600) int leaves,
            @ForAll @IntRange(min = 2, max = 4) int fanOut,
            @ForAll @IntRange(min = 1, max = 6) int maxLevels) {
        boolean fits = expectedDocumentsPerLevel(leaves, fanOut).size() <= maxLevels;
        Recorder recorder = new Recorder();
        if (fits) {
            assertThat(build(leaves, fanOut, maxLevels, recorder).levels()).isLessThanOrEqualTo(maxLevels);
        } else {
            assertThatThrownBy(() -> build(leaves, fanOut, maxLevels, recorder)).isInstanceOf(TooDeep.class);
        }
        assertThat(recorder.docs).allSatisfy(d -> assertThat(d.level()).isLessThan(maxLevels));
    }

    @Test
    void aSingleDocumentIsTheRootAndAnEmptyIndexIsRefused() {
        Recorder recorder = new Recorder();
        IndexTreeBuilder.Root<Ref> root = build(5, 5, 1, recorder);
        assertThat(root.levels()).isEqualTo(1);
        assertThat(recorder.docs)
                .singleElement()
                .satisfies(d -> assertThat(d.entries()).hasSize(5));

        IndexTreeBuilder<Ref> empty = new IndexTreeBuilder<>(4, 8, new Recorder(), TooDeep::new);
        assertThatThrownBy(empty::finish).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new IndexTreeBuilder<>(1, 8, new Recorder(), TooDeep::new))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
