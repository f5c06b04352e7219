package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Group commit: batches that threads write at the same moment share durable puts, and each batch and each item's
 * order survive as if every batch had its own put.
 */
class GroupCommitTest {
    private static final int THREADS = 16;
    private static final int BATCHES_PER_ITEM = 12;

    @TempDir
    Path root;

    /** Item "item-T" gets BATCHES_PER_ITEM consecutive batches (2 FIELD_SETs each), one after the other. */
    private static long writeConcurrently(LogWriter w) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                String item = "item-" + t;
                done.add(pool.submit(() -> {
                    start.await();
                    ItemSeq next = ItemSeq.FIRST;
                    for (int b = 0; b < BATCHES_PER_ITEM; b++) {
                        CheckpointBatch.Builder cb =
                                CheckpointBatch.builder("run-1", w.epoch(), StepRef.of("gen", b, null, 1));
                        var ie = cb.item(ItemRef.root(item), next);
                        if (b == 0) {
                            ie.created(null);
                        }
                        ie.set("round", new FieldValue.StrValue(item + "/" + b));
                        ie.set("b" + b, new FieldValue.StrValue("x"));
                        ie.stepCompleted();
                        next = ie.nextSeq();
                        w.write(cb.build());
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
            return w.puts();
        } finally {
            pool.shutdownNow();
        }
    }

    private static void assertEveryItemWhole(CheckpointLog log) {
        try (LogReader r = log.reader()) {
            Map<String, ItemState> all = r.foldAll();
            assertThat(all).hasSize(THREADS);
            for (int t = 0; t < THREADS; t++) {
                ItemState s = all.get("item-" + t);
                // ITEM_CREATED + 12 x (2 FIELD_SETs + STEP_COMPLETED), in order: the last batch's value wins.
                assertThat(s.eventCount()).isEqualTo(1 + BATCHES_PER_ITEM * 3);
                assertThat(s.completedSteps()).hasSize(BATCHES_PER_ITEM);
                assertThat(s.fields().get("round").last())
                        .isEqualTo(new FieldValue.StrValue("item-" + t + "/" + (BATCHES_PER_ITEM - 1)));
                List<CheckpointEvent> events = r.events("item-" + t);
                for (int i = 1; i < events.size(); i++) {
                    assertThat(events.get(i).itemSeq().value())
                            .isEqualTo(events.get(i - 1).itemSeq().value() + 1);
                }
            }
        }
    }

    @Test
    void concurrentBatchesShareDurablePutsAndKeepEachItemsOrder() throws Exception {
        LogLocation loc = new LogLocation(root, "pipe", "group");
        long puts;
        try (CheckpointLog log = CheckpointLog.openOrCreate(loc);
                LogWriter w = log.openWriter("w", WriterOptions.DEFAULTS)) {
            puts = writeConcurrently(w);
        }
        // 192 batches from 16 threads that wait on each other's puts: far fewer puts than batches.
        assertThat(puts).isLessThan(THREADS * BATCHES_PER_ITEM / 2);
        try (CheckpointLog log = CheckpointLog.open(loc)) {
            assertEveryItemWhole(log);
        }
    }

    @Test
    void withoutGroupCommitEveryBatchIsItsOwnPut() throws Exception {
        LogLocation loc = new LogLocation(root, "pipe", "single");
        try (CheckpointLog log = CheckpointLog.openOrCreate(loc);
                LogWriter w = log.openWriter("w", WriterOptions.DEFAULTS.withGroupBatches(1))) {
            assertThat(writeConcurrently(w)).isEqualTo(THREADS * BATCHES_PER_ITEM);
        }
        try (CheckpointLog log = CheckpointLog.open(loc)) {
            assertEveryItemWhole(log);
        }
    }
}
