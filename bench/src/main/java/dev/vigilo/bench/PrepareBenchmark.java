package dev.vigilo.bench;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.CreateResult;
import dev.vigilo.plan.PreparationOptions;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.plan.RunStatusReader;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectInfo;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StorageConfig;
import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Run preparation throughput against a raw baseline, in one run, plus heap flatness.
 *
 * <p>Workload: generated datasets of {@code SMALL} (default 100,000) and {@code LARGE} (default 1,000,000) cases
 * (~120 bytes each, groups and tags so gates select subsets), uploaded once into a local store and an embedded
 * PostgreSQL. Vigilo: a full {@code run create} (verified traversal with the identity check, chunk files, index,
 * gate chain, configuration, manifest, grouped ownership rows, byte verification after each write, the publication
 * verification pass). Raw baseline, the minimum durable work of the same job: reading every case file of the same
 * dataset from disk and hashing it with SHA-256, then creating as many files as the plan has, of the same sizes,
 * durably (8 parallel writers, one fsync per file, one directory fsync per group of 64). Resume: a preparation of
 * the large dataset stopped once 90% of its chunks are acknowledged, then the time of the repeat that finishes it.
 * Heap: the largest heap in use after a GC while preparing, sampled every 20 ms, for the small and the large
 * dataset.
 *
 * <p>With {@code s3}, the datasets and plans live in an S3 store served by s3proxy in this JVM (objects on disk;
 * s3proxy shares the heap and the cores), and the raw baseline does the same minimal work against it: GETs and
 * hashes every case object ({@link #READS_IN_FLIGHT} at a time, as preparation reads ahead), then PUTs as many
 * objects of the plan's sizes ({@link #PUTS_IN_FLIGHT} at a time, as preparation transfers), each a durable,
 * checksummed create of the product's S3 store. Plans and baseline objects are deleted after each measurement.
 *
 * <p>Run: {@code bench/run prepare [SMALL LARGE] [local|s3]} (with {@code -Xmx256m}).
 */
public final class PrepareBenchmark {
    /** The run profile: three gates over two evaluators, so gates select subsets by group and tag. */
    private static final String PROFILE = """
            name: fixture
            agent: {kind: command, command: [./agent]}
            evaluators:
              - {name: exact, kind: exact_match}
              - {name: re, kind: regex, applies_to: {groups: [math]}}
            gates:
              - {name: all, required_evaluators: [exact], min_pass_rate: 0.9}
              - {name: math, required_evaluators: [exact, re], min_pass_rate: 0.5}
              - {name: hard, required_evaluators: [exact], tags_any: [hard], min_pass_rate: 0.5}
            limits: {max_cases: 100000000}
            """;

    /** Case objects the S3 baseline reads at once: preparation's read-ahead of the dataset. */
    private static final int READS_IN_FLIGHT = 4;
    /** Objects the S3 baseline PUTs at once: preparation's transfers in flight. */
    private static final int PUTS_IN_FLIGHT = 16;

    private PrepareBenchmark() {}

    public static void main(String[] args) throws Exception {
        String kind = BenchStores.kindArgument(args);
        String[] sizes = BenchStores.withoutKind(args);
        int small = sizes.length > 0 ? Integer.parseInt(sizes[0]) : 100_000;
        int large = sizes.length > 1 ? Integer.parseInt(sizes[1]) : 1_000_000;
        Path work = Files.createTempDirectory("vigilo-bench-prepare-");
        System.out.printf("max heap %d MiB, work dir %s%n", Runtime.getRuntime().maxMemory() >> 20, work);
        try (BenchStores stores = BenchStores.of(kind, work);
                ControlDatabase control = ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")));
                ObjectStore smallStore = ObjectStores.open(stores.spec("small"));
                ObjectStore largeStore = ObjectStores.open(stores.spec("large"))) {
            System.out.printf("stores: %s%n", stores.describe());
            DatasetEntry smallSet = upload(control, smallStore, work, "small", small);
            DatasetEntry largeSet = upload(control, largeStore, work, "large", large);
            String profile = PROFILE;
            PublicationClock clock = new PublicationClock();
            PreparationOptions d = PreparationOptions.DEFAULTS;
            PreparationOptions timed = new PreparationOptions(
                    d.lease(), d.renewInterval(), d.checkpointInterval(), d.groupMaxFiles(), clock);
            RunPreparation smallPrep = new RunPreparation(control.jdbi(), stores.config("small"), timed);
            RunPreparation largePrep = new RunPreparation(control.jdbi(), stores.config("large"), timed);
            // Warm-up on the small dataset, then measured runs; each plan is deleted once measured.
            baseline(stores, "small", smallStore);
            forget(stores, "small", prepare(smallPrep, clock, smallSet, profile));
            Result s = prepare(smallPrep, clock, smallSet, profile);
            forget(stores, "small", s);
            double b1 = baseline(stores, "large", largeStore);
            Result l = prepare(largePrep, clock, largeSet, profile);
            double b2 = baseline(stores, "large", largeStore);
            double base = (b1 + b2) / 2;
            // The raw baseline of the whole job: read and hash the case files, then create as many files of the
            // same sizes as the plan has, durably: locally, writes in parallel, one fsync per file, one directory
            // fsync per group of 64; on S3, parallel PUTs.
            List<Long> planSizes =
                    largeStore.list("plans/" + l.runId + "/", Deadline.after(Duration.ofMinutes(5))).stream()
                            .map(ObjectInfo::length)
                            .toList();
            forget(stores, "large", l);
            double rawWrite;
            if (stores.isS3()) {
                try (ObjectStore rawStore = ObjectStores.open(stores.spec("raw-plan"))) {
                    rawWrite = rawPlanPuts(rawStore, planSizes);
                }
                stores.delete("raw-plan", "");
            } else {
                rawWrite = rawPlanWrites(work.resolve("raw-plan"), planSizes);
            }
            double rawSeconds = largeSet.caseCount() / base + rawWrite;
            long t0 = System.nanoTime();
            DatasetReader.open(largeSet, largeStore).readVerified(c -> {});
            double traversal = largeSet.caseCount() / ((System.nanoTime() - t0) / 1e9);
            Resumed resumed = resumeAfter(control, stores.config("large"), largeSet, profile, 0.9);
            System.out.printf(
                    "verified dataset traversal alone (DatasetReader.readVerified): %,.0f cases/s%n", traversal);
            System.out.printf(
                    "baseline (read + SHA-256 of the case files): %,.0f cases/s (%,.0f and %,.0f)%n", base, b1, b2);
            System.out.printf(
                    "raw baseline, %,d cases: read + hash %.2f s + %,d plan-sized %s %.2f s = %.2f s"
                            + " (%,.0f cases/s)%n",
                    large,
                    largeSet.caseCount() / base,
                    planSizes.size(),
                    stores.isS3() ? "objects PUT" : "files written durably",
                    rawWrite,
                    rawSeconds,
                    largeSet.caseCount() / rawSeconds);
            System.out.printf(
                    "run create, %,d cases: %,.0f cases/s, %.1f s (publication pass %.2f s), peak heap after GC"
                            + " %.1f MiB%n",
                    small, s.casesPerSecond, s.seconds, s.publicationSeconds, s.peakHeapMiB);
            System.out.printf(
                    "run create, %,d cases: %,.0f cases/s, %.2f s (publication pass %.2f s), peak heap after GC"
                            + " %.1f MiB%n",
                    large, l.casesPerSecond, l.seconds, l.publicationSeconds, l.peakHeapMiB);
            System.out.printf(
                    "ratio run create / raw baseline (throughput): %.3f (run create / read + hash alone: %.3f)%n",
                    rawSeconds / l.seconds, l.casesPerSecond / base);
            System.out.printf(
                    "resume after %d of %,d chunks acknowledged: %.2f s = %.0f%% of the full run create (the"
                            + " interrupted attempt took %.2f s)%n",
                    resumed.cursor,
                    expectedChunks(large),
                    resumed.seconds,
                    100 * resumed.seconds / l.seconds,
                    resumed.interruptedSeconds);
            System.out.printf("heap ratio %,d vs %,d cases: %.2f%n", large, small, l.peakHeapMiB / s.peakHeapMiB);
        } finally {
            try (var paths = Files.walk(work)) {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private record Result(
            double casesPerSecond, double seconds, double publicationSeconds, double peakHeapMiB, UUID runId) {}

    /** Notes when a preparation starts its publication verification pass. */
    private static final class PublicationClock implements PreparationOptions.Hooks {
        volatile long started;

        @Override
        public void beforePublication() {
            started = System.nanoTime();
        }
    }

    private record Resumed(long cursor, double seconds, double interruptedSeconds) {}

    /** Stops a preparation once {@code share} of its chunks are acknowledged, then times the repeat that resumes it. */
    private static Resumed resumeAfter(
            ControlDatabase control, StorageConfig config, DatasetEntry dataset, String profile, double share) {
        long stopAt = (long) (expectedChunks(dataset.caseCount()) * share);
        PreparationOptions.Hooks stop = new PreparationOptions.Hooks() {
            @Override
            public void afterAcknowledge(long chunkPrefix) {
                if (chunkPrefix >= stopAt) {
                    throw new IllegalStateException("stopped at chunk " + chunkPrefix);
                }
            }
        };
        PreparationOptions d = PreparationOptions.DEFAULTS;
        PreparationOptions stopping =
                new PreparationOptions(d.lease(), d.renewInterval(), d.checkpointInterval(), d.groupMaxFiles(), stop);
        CreateRequest request = new CreateRequest(
                ProfileInput.inline(profile), dataset.uploadId(), Optional.of(UUID.randomUUID()), false);
        long t0 = System.nanoTime();
        try {
            new RunPreparation(control.jdbi(), config, stopping).create(request);
            throw new IllegalStateException("the preparation was not stopped");
        } catch (IllegalStateException e) {
            if (!e.getMessage().startsWith("stopped at chunk")) {
                throw e;
            }
        }
        double interrupted = (System.nanoTime() - t0) / 1e9;
        long cursor = new RunStatusReader(control.jdbi())
                .status(request.runId().orElseThrow())
                .creationProgress()
                .planChunkCursor();
        long t1 = System.nanoTime();
        CreateResult r = new RunPreparation(control.jdbi(), config).create(request);
        double seconds = (System.nanoTime() - t1) / 1e9;
        if (r.cases() != dataset.caseCount()) {
            throw new IllegalStateException("resumed " + r.cases() + " of " + dataset.caseCount());
        }
        return new Resumed(cursor, seconds, interrupted);
    }

    /** Creates files of {@code sizes} under {@code dir}: 8 writers, an fsync per file, a directory fsync per 64. */
    private static double rawPlanWrites(Path dir, List<Long> sizes) throws Exception {
        Files.createDirectories(dir);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        byte[] bytes =
                new byte[(int) sizes.stream().mapToLong(Long::longValue).max().orElse(0)];
        new java.util.Random(1).nextBytes(bytes);
        long t0 = System.nanoTime();
        try {
            for (int g = 0; g < sizes.size(); g += 64) {
                List<java.util.concurrent.Future<?>> group = new java.util.ArrayList<>();
                for (int i = g; i < Math.min(sizes.size(), g + 64); i++) {
                    Path file = dir.resolve("f" + i);
                    int size = (int) (long) sizes.get(i);
                    group.add(pool.submit(() -> {
                        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(
                                file,
                                java.nio.file.StandardOpenOption.CREATE_NEW,
                                java.nio.file.StandardOpenOption.WRITE)) {
                            ch.write(java.nio.ByteBuffer.wrap(bytes, 0, size));
                            ch.force(true);
                        }
                        return null;
                    }));
                }
                for (java.util.concurrent.Future<?> f : group) {
                    f.get();
                }
                try (java.nio.channels.FileChannel ch =
                        java.nio.channels.FileChannel.open(dir, java.nio.file.StandardOpenOption.READ)) {
                    ch.force(true);
                }
            }
            return (System.nanoTime() - t0) / 1e9;
        } finally {
            pool.shutdown();
        }
    }

    /**
     * Creates objects of {@code sizes} in {@code store}, {@link #PUTS_IN_FLIGHT} at a time; each create is one
     * conditional, checksummed PUT.
     */
    private static double rawPlanPuts(ObjectStore store, List<Long> sizes) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(PUTS_IN_FLIGHT);
        byte[] random =
                new byte[(int) sizes.stream().mapToLong(Long::longValue).max().orElse(0)];
        new java.util.Random(1).nextBytes(random);
        long t0 = System.nanoTime();
        try {
            Deque<Future<ObjectRef>> inFlight = new ArrayDeque<>();
            for (int i = 0; i < sizes.size(); i++) {
                if (inFlight.size() >= PUTS_IN_FLIGHT) {
                    inFlight.removeFirst().get();
                }
                ObjectKey key = ObjectKey.of("f" + i);
                byte[] bytes = Arrays.copyOf(random, (int) (long) sizes.get(i));
                inFlight.addLast(pool.submit(() -> store.create(key, bytes, Deadline.after(Duration.ofMinutes(2)))));
            }
            while (!inFlight.isEmpty()) {
                inFlight.removeFirst().get();
            }
            return (System.nanoTime() - t0) / 1e9;
        } finally {
            pool.shutdownNow();
        }
    }

    /** Deletes the plan of a measured preparation, so that the store does not grow from run to run. */
    private static void forget(BenchStores stores, String name, Result prepared) throws IOException {
        stores.delete(name, "plans/" + prepared.runId() + "/");
    }

    private static DatasetEntry upload(ControlDatabase control, ObjectStore store, Path work, String name, int cases)
            throws Exception {
        Path file = work.resolve(name + ".jsonl");
        writeCases(file, cases);
        long t0 = System.nanoTime();
        DatasetEntry e = new DatasetCatalog(control.jdbi())
                .upload(new UploadRequest(file, Optional.of(name), Optional.empty()), store, UploadProgress.NONE);
        System.out.printf("uploaded %s: %,d cases in %.1f s%n", name, cases, (System.nanoTime() - t0) / 1e9);
        Files.delete(file);
        return e;
    }

    private static Result prepare(RunPreparation prep, PublicationClock clock, DatasetEntry dataset, String profile)
            throws Exception {
        System.gc();
        HeapSampler sampler = new HeapSampler();
        sampler.start();
        long t0 = System.nanoTime();
        CreateResult r = prep.create(new CreateRequest(
                ProfileInput.inline(profile), dataset.uploadId(), Optional.of(UUID.randomUUID()), false));
        long end = System.nanoTime();
        double seconds = (end - t0) / 1e9;
        sampler.stopAndJoin();
        if (r.cases() != dataset.caseCount()) {
            throw new IllegalStateException("prepared " + r.cases() + " of " + dataset.caseCount());
        }
        return new Result(
                dataset.caseCount() / seconds,
                seconds,
                (end - clock.started) / 1e9,
                sampler.peak.get() / 1048576.0,
                r.runId());
    }

    private static void writeCases(Path file, int cases) throws IOException {
        try (BufferedWriter w = Files.newBufferedWriter(file)) {
            for (int i = 0; i < cases; i++) {
                String group = i % 3 == 0 ? ",\"group\":\"math\"" : (i % 3 == 1 ? ",\"group\":\"prose\"" : "");
                String tags = (i % 7 == 0 ? ",\"tags\":[\"hard\",\"x\"" : ",\"tags\":[\"x\"")
                        + (i < 150 ? ",\"first\"]" : "]");
                w.write("{\"id\":\"case-" + i + "\",\"input\":\"what is " + i + "\",\"expected\":\"" + (i * 2) + "\""
                        + group + tags + "}\n");
            }
        }
    }

    /**
     * Reads and hashes every case file of the store {@code name} (each store holds one dataset): locally from its
     * directory, on S3 through GETs verified against the digest the content-addressed key names.
     */
    private static double baseline(BenchStores stores, String name, ObjectStore store) throws Exception {
        long t0 = System.nanoTime();
        List<ObjectInfo> files = store.list("datasets/cases/", Deadline.after(Duration.ofMinutes(5)));
        long lines = 0;
        if (stores.isS3()) {
            ExecutorService pool = Executors.newFixedThreadPool(READS_IN_FLIGHT);
            try {
                Deque<Future<byte[]>> ahead = new ArrayDeque<>();
                for (ObjectInfo f : files) {
                    if (ahead.size() >= READS_IN_FLIGHT) {
                        lines += newlines(ahead.removeFirst().get());
                    }
                    String key = f.key().value();
                    ObjectRef ref = new ObjectRef(
                            f.key(),
                            f.length(),
                            Sha256.parseHex(key.substring(key.lastIndexOf('/') + 1, key.lastIndexOf('.'))));
                    ahead.addLast(pool.submit(() -> store.read(ref, Deadline.after(Duration.ofMinutes(2)))));
                }
                while (!ahead.isEmpty()) {
                    lines += newlines(ahead.removeFirst().get());
                }
            } finally {
                pool.shutdownNow();
            }
        } else {
            Path root = stores.localRoot(name);
            for (ObjectInfo f : files) {
                byte[] b = Files.readAllBytes(root.resolve(f.key().value()));
                Sha256.of(b);
                lines += newlines(b);
            }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        long cases = lines - files.size(); // minus one header line per file
        return cases / seconds;
    }

    private static long newlines(byte[] bytes) {
        long lines = 0;
        for (byte x : bytes) {
            if (x == '\n') {
                lines++;
            }
        }
        return lines;
    }

    /** Samples the heap in use after the most recent GC of every heap pool. */
    private static final class HeapSampler extends Thread {
        final AtomicLong peak = new AtomicLong();
        private volatile boolean stop;

        HeapSampler() {
            setDaemon(true);
        }

        @Override
        public void run() {
            List<MemoryPoolMXBean> pools = ManagementFactory.getMemoryPoolMXBeans().stream()
                    .filter(p -> p.getType() == MemoryType.HEAP && p.isCollectionUsageThresholdSupported())
                    .toList();
            while (!stop) {
                long used = 0;
                for (MemoryPoolMXBean p : pools) {
                    MemoryUsage u = p.getCollectionUsage();
                    used += u == null ? 0 : u.getUsed();
                }
                peak.accumulateAndGet(used, Math::max);
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        void stopAndJoin() throws InterruptedException {
            stop = true;
            join();
        }
    }

    /** Chunk files of a plan over {@code caseCount} cases: the plan format's 100 cases per chunk (docs/formats). */
    private static long expectedChunks(long caseCount) {
        return (caseCount + 99) / 100;
    }
}
