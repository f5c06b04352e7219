package dev.vigilo.bench;

import dev.vigilo.checkpoint.CheckpointBatch;
import dev.vigilo.checkpoint.CheckpointEvent;
import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.FieldValue;
import dev.vigilo.checkpoint.ItemRef;
import dev.vigilo.checkpoint.ItemSeq;
import dev.vigilo.checkpoint.ItemState;
import dev.vigilo.checkpoint.LogLocation;
import dev.vigilo.checkpoint.LogReader;
import dev.vigilo.checkpoint.LogWriter;
import dev.vigilo.checkpoint.Maintenance;
import dev.vigilo.checkpoint.PlainLanceAppends;
import dev.vigilo.checkpoint.StepRef;
import dev.vigilo.checkpoint.WriterEpoch;
import dev.vigilo.checkpoint.WriterOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Benchmarks (not a test; prints ratios against a baseline measured in the same run):
 *
 * <ol>
 *   <li>checkpoint events/s through MemWAL ({@link LogWriter#write}: durable put + fencing check +
 *       flushes) vs plain Lance append of the same batches (one {@code Dataset.write APPEND} per
 *       batch);
 *   <li>resume fold latency of one item ({@link LogReader#fold}) in a log of 1,000,000 events,
 *       without and with the item_id BTREE index.
 * </ol>
 *
 * The plain appends go through checkpoint's published test fixture {@link PlainLanceAppends}. Run:
 * {@code bench/run checkpoint [batches] [events]}.
 */
public final class CheckpointBenchmark {
    private CheckpointBenchmark() {}

    public static void main(String[] args) throws Exception {
        int batches = args.length > 0 ? Integer.parseInt(args[0]) : 400;
        int total = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
        Path root = Files.createTempDirectory(Path.of("target"), "bench");
        try (CheckpointLog log = CheckpointLog.openOrCreate(new LogLocation(root, "bench", "write"))) {
            List<CheckpointBatch> work = new ArrayList<>();
            WriterEpoch ep;
            long t0;
            double memwal;
            try (LogWriter w = log.openWriter("bench", WriterOptions.mergingEvery(0))) {
                ep = w.epoch();
                for (int i = 0; i < batches; i++) work.add(itemWithStep(ep, "w-" + i, 3));
                for (int i = 0; i < 20; i++) w.write(itemWithStep(ep, "warm-" + i, 3));
                t0 = System.nanoTime();
                for (CheckpointBatch b : work) w.write(b);
                memwal = batches * 5 / ((System.nanoTime() - t0) / 1e9);
            }
            String plainUri = root.resolve("plain.lance").toString();
            PlainLanceAppends.create(log, plainUri); // empty base for the append baseline
            for (int i = 0; i < 20; i++)
                append(log, plainUri, itemWithStep(ep, "warm-" + i, 3).events());
            t0 = System.nanoTime();
            for (CheckpointBatch b : work) append(log, plainUri, b.events());
            double plain = batches * 5 / ((System.nanoTime() - t0) / 1e9);
            System.out.printf(
                    "WRITE  batches=%d x 5 events: MemWAL durable put %.0f events/s, plain Lance append %.0f events/s, ratio MemWAL/plain = %.2f%n",
                    batches, memwal, plain, memwal / plain);
        }

        LogLocation big = new LogLocation(root, "bench", "fold");
        try (CheckpointLog log = CheckpointLog.openOrCreate(big)) {
            int perItem = 10;
            int itemsN = total / perItem;
            WriterEpoch ep = new WriterEpoch("bench@load#1");
            long t0 = System.nanoTime();
            List<CheckpointEvent> chunk = new ArrayList<>();
            for (int i = 0; i < itemsN; i++) {
                CheckpointBatch.Builder b = CheckpointBatch.builder("bench", ep, StepRef.of("gen", 0, null, 1));
                var ie = b.item(ItemRef.root("item-" + i), ItemSeq.FIRST).created(null);
                for (int f = 0; f < perItem - 2; f++) ie.set("f" + f, new FieldValue.IntValue(f));
                ie.stepCompleted();
                chunk.addAll(b.build().events());
                if (chunk.size() >= 100_000) {
                    append(log, log.location().uri(), chunk);
                    chunk.clear();
                }
            }
            if (!chunk.isEmpty()) append(log, log.location().uri(), chunk);
            System.out.printf(
                    "LOAD   %d events (%d items) into the base table in %.1f s%n",
                    itemsN * perItem, itemsN, (System.nanoTime() - t0) / 1e9);
            Random rnd = new Random(7);
            double noIndex = foldLatency(log, itemsN, rnd, perItem);
            try (Maintenance m = log.tryElectMaintenance().orElseThrow()) {
                t0 = System.nanoTime();
                m.runOnce(3_600_000);
                System.out.printf(
                        "INDEX  compaction + item_id BTREE index in %.1f s%n", (System.nanoTime() - t0) / 1e9);
            }
            double withIndex = foldLatency(log, itemsN, rnd, perItem);
            System.out.printf(
                    "FOLD   one item in a %d-event log: median %.1f ms without item_id index, %.1f ms with; ratio without/with = %.1f%n",
                    itemsN * perItem, noIndex, withIndex, noIndex / withIndex);
        }
    }

    private static double foldLatency(CheckpointLog log, int itemsN, Random rnd, int perItem) {
        double[] ms = new double[15];
        try (LogReader r = log.reader()) {
            r.fold("item-0"); // warm-up
            for (int i = 0; i < ms.length; i++) {
                String id = "item-" + rnd.nextInt(itemsN);
                long t = System.nanoTime();
                ItemState s = r.fold(id).orElseThrow();
                ms[i] = (System.nanoTime() - t) / 1e6;
                if (s.eventCount() != perItem)
                    throw new IllegalStateException("bad fold of " + id + ": " + s.eventCount());
            }
        }
        Arrays.sort(ms);
        return ms[ms.length / 2];
    }

    private static void append(CheckpointLog log, String uri, List<CheckpointEvent> events) throws Exception {
        PlainLanceAppends.append(log, uri, events);
    }

    /** ITEM_CREATED + {@code fields} FIELD_SETs + STEP_COMPLETED of step "gen"#0, for a new root item. */
    private static CheckpointBatch itemWithStep(WriterEpoch epoch, String itemId, int fields) {
        CheckpointBatch.Builder b = CheckpointBatch.builder("run-1", epoch, StepRef.of("gen", 0, null, 1));
        var ie = b.item(ItemRef.root(itemId), ItemSeq.FIRST).created(null);
        for (int f = 0; f < fields; f++) ie.set("f" + f, new FieldValue.StrValue(itemId + "/" + f));
        ie.stepCompleted();
        return b.build();
    }
}
