package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The fold is order-independent, ignores re-delivered events, and never folds two histories into
 * one.
 */
class FoldPropertiesTest {
    static List<CheckpointEvent> history(int steps, long seed) {
        WriterEpoch ep = new WriterEpoch("w@s#1");
        Random r = new Random(seed);
        List<CheckpointEvent> out = new ArrayList<>();
        CheckpointBatch.Builder b0 = CheckpointBatch.builder("r", ep, StepRef.NONE);
        var ie = b0.item(ItemRef.root("x"), ItemSeq.FIRST).created(null).set("v", new FieldValue.IntValue(0));
        out.addAll(b0.build().events());
        ItemSeq next = ie.nextSeq();
        for (int s = 0; s < steps; s++) {
            CheckpointBatch.Builder b = CheckpointBatch.builder("r", ep, StepRef.of("s" + s, s, null, 1));
            var e = b.item(ItemRef.root("x"), next);
            if (r.nextBoolean()) {
                e.set("v", new FieldValue.IntValue(r.nextInt(100)));
            } else {
                e.append("log", new FieldValue.StrValue("s" + s));
            }
            e.stepCompleted();
            out.addAll(b.build().events());
            next = e.nextSeq();
        }
        return out;
    }

    @Property(tries = 200)
    void foldIgnoresOrderAndRedeliveries(@ForAll @IntRange(min = 0, max = 12) int steps, @ForAll long seed) {
        List<CheckpointEvent> h = history(steps, seed);
        ItemState expected = Fold.fold("x", h);
        List<CheckpointEvent> shuffled = new ArrayList<>(h);
        Random r = new Random(seed ^ 0x5DEECE66DL);
        for (int i = 0; i < 3 && !h.isEmpty(); i++) {
            shuffled.add(h.get(r.nextInt(h.size()))); // retried batches seen twice
        }
        Collections.shuffle(shuffled, r);
        ItemState actual = Fold.fold("x", shuffled);
        assertThat(actual).isEqualTo(expected);
        assertThat(actual.completedSteps()).hasSize(steps);
        assertThat(actual.nextSeq().value()).isEqualTo(h.size());
    }

    @Property(tries = 100)
    void twoHistoriesAtOneSeqAreAViolation(@ForAll @IntRange(min = 1, max = 8) int steps, @ForAll long seed) {
        List<CheckpointEvent> h = new ArrayList<>(history(steps, seed));
        CheckpointBatch.Builder other =
                CheckpointBatch.builder("r", new WriterEpoch("w2@s#2"), StepRef.of("s0", 0, null, 1));
        other.item(ItemRef.root("x"), new ItemSeq(2)).stepCompleted();
        h.addAll(other.build().events());
        assertThatThrownBy(() -> Fold.fold("x", h)).isInstanceOf(FencingViolationException.class);
    }
}
