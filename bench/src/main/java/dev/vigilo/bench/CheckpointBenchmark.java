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
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * Benchmarks (not a test; prints ratios against a baseline measured in the same run):
 *
 * <ol>
 *   <li>checkpoint events/s through MemWAL ({@link LogWriter#write}: durable put + fencing check +
 *       flushes) vs the ceiling, a raw MemWAL put loop of the same batches straight on the Lance Java API
 *       ({@link RawMemWalPuts}: same schema, rows per batch and durable writes, no Vigilo code), and vs plain Lance
 *       appends of the same batches (one {@code Dataset.write APPEND} per batch), in alternating rounds;
 *   <li>resume fold latency of one item ({@link LogReader#fold}) in a log of 1,000,000 events,
 *       without and with the item_id BTREE index.
 * </ol>
 *
 * The plain appends go through checkpoint's published test fixture {@link PlainLanceAppends}. Run:
 * {@code bench/run checkpoint [batches] [events]} (events 0: the write part only).
 */
public final class CheckpointBenchmark {
    private CheckpointBenchmark() {}

    public static void main(String[] args) throws Exception {
        int batches = args.length > 0 ? Integer.parseInt(args[0]) : 400;
        int total = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
        Path root = Files.createTempDirectory(Path.of("target"), "bench");
        write(root, batches);
        if (total <= 0) {
            return;
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
                for (int f = 0; f < perItem - 2; f++) {
                    ie.set("f" + f, new FieldValue.IntValue(f));
                }
                ie.stepCompleted();
                chunk.addAll(b.build().events());
                if (chunk.size() >= 100_000) {
                    append(log, log.location().uri(), chunk);
                    chunk.clear();
                }
            }
            if (!chunk.isEmpty()) {
                append(log, log.location().uri(), chunk);
            }
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

    /**
     * The same batches through Vigilo's writer, a raw MemWAL put loop and plain Lance appends, in alternating rounds
     * of {@code batches} each; prints each round and the medians. Vigilo's writer flushes its memtable by its own rule
     * (every {@link WriterOptions#FLUSH_INTERVAL}) inside the timed loop; the raw loop leaves its memtable to a flush
     * at close, timed apart (a new raw writer per round, so that flush holds exactly the round's batches).
     */
    private static void write(Path root, int batches) throws Exception {
        int rounds = 3;
        double[] vigilo = new double[rounds], raw = new double[rounds], rawFlushed = new double[rounds];
        double[] plain = new double[rounds];
        try (CheckpointLog log = CheckpointLog.openOrCreate(new LogLocation(root, "bench", "write"));
                LogWriter w = log.openWriter("bench", WriterOptions.mergingEvery(0));
                BufferAllocator alloc = new RootAllocator()) {
            WriterEpoch ep = w.epoch();
            String plainUri = root.resolve("plain.lance").toString();
            PlainLanceAppends.create(log, plainUri); // empty base for the append baseline
            try (RawMemWalPuts warm = new RawMemWalPuts(
                    alloc, log.location().uri(), root.resolve("raw-warm.lance").toString())) {
                for (int i = 0; i < 20; i++) {
                    CheckpointBatch b = itemWithStep(ep, "warm-" + i, 3);
                    w.write(b);
                    warm.put(b.events());
                    append(log, plainUri, b.events());
                }
            }
            for (int r = 0; r < rounds; r++) {
                List<CheckpointBatch> work = new ArrayList<>();
                for (int i = 0; i < batches; i++) {
                    work.add(itemWithStep(ep, "w-" + r + "-" + i, 3));
                }
                int events = work.stream().mapToInt(b -> b.events().size()).sum();
                long t0 = System.nanoTime();
                for (CheckpointBatch b : work) {
                    w.write(b);
                }
                double vigiloS = (System.nanoTime() - t0) / 1e9;
                RawMemWalPuts rawPuts = new RawMemWalPuts(
                        alloc,
                        log.location().uri(),
                        root.resolve("raw-" + r + ".lance").toString());
                t0 = System.nanoTime();
                for (CheckpointBatch b : work) {
                    rawPuts.put(b.events());
                }
                double rawS = (System.nanoTime() - t0) / 1e9;
                t0 = System.nanoTime();
                rawPuts.close();
                double rawFlushS = (System.nanoTime() - t0) / 1e9;
                t0 = System.nanoTime();
                for (CheckpointBatch b : work) {
                    append(log, plainUri, b.events());
                }
                double plainS = (System.nanoTime() - t0) / 1e9;
                vigilo[r] = events / vigiloS;
                raw[r] = events / rawS;
                rawFlushed[r] = events / (rawS + rawFlushS);
                plain[r] = events / plainS;
                System.out.printf(
                        "WRITE  round %d, %d batches x %d events: Vigilo %.0f events/s (%.2f ms/batch); raw MemWAL put"
                                + " loop %.0f events/s (%.2f ms/batch) + its memtable flush %.0f ms (%.2f ms/batch);"
                                + " plain Lance append %.0f events/s (%.2f ms/batch)%n",
                        r + 1,
                        batches,
                        events / batches,
                        vigilo[r],
                        1e3 * vigiloS / batches,
                        raw[r],
                        1e3 * rawS / batches,
                        1e3 * rawFlushS,
                        1e3 * rawFlushS / batches,
                        plain[r],
                        1e3 * plainS / batches);
            }
        }
        double v = median(vigilo), rw = median(raw), rf = median(rawFlushed), pl = median(plain);
        System.out.printf(
                "WRITE  medians of %d rounds: Vigilo durable checkpoint batches %.0f events/s; raw MemWAL put loop %.0f"
                        + " events/s (%.0f with its memtable flush); plain Lance append %.0f events/s%n",
                rounds, v, rw, rf, pl);
        System.out.printf(
                "WRITE  ratio Vigilo/raw MemWAL put loop = %.2f (goal >= 0.80); Vigilo/(raw put loop + flush) = %.2f;"
                        + " Vigilo/plain append = %.2f%n",
                v / rw, v / rf, v / pl);
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s[s.length / 2];
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
                if (s.eventCount() != perItem) {
                    throw new IllegalStateException("bad fold of " + id + ": " + s.eventCount());
                }
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
        for (int f = 0; f < fields; f++) {
            ie.set("f" + f, new FieldValue.StrValue(itemId + "/" + f));
        }
        ie.stepCompleted();
        return b.build();
    }
}
