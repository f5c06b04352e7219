package dev.vigilo.bench;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.Sha256;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Dataset upload throughput against a raw baseline, in one run.
 *
 * <p>Workload: a generated JSONL file of {@code CASES} cases (default 1,000,000, ~250 bytes each). Vigilo: a full
 * {@code dataset upload} (validation pass, store pass with content-addressed case files and index into a local
 * object store, catalog row in an embedded PostgreSQL). Baseline: reading the same file, hashing it with SHA-256
 * and writing its bytes as 1 MiB files, each fsynced (the durability every Vigilo case file gets). Each side runs
 * once to warm up and then three times, alternating; the median is reported.
 *
 * <p>With {@code s3}, Vigilo uploads into an S3 store served by s3proxy in this JVM (objects on disk), and the
 * baseline reads and hashes the file and PUTs its bytes as 1 MiB objects into the same service, with as many PUTs
 * in flight as the upload creates case files at once ({@link #PUTS_IN_FLIGHT}). Both sides write through the
 * product's S3 store, so every PUT is the same conditional, SHA-256-checked request. Each round's objects are
 * deleted before the next.
 *
 * <p>Run: {@code bench/run upload [CASES] [local|s3]}.
 */
public final class UploadBenchmark {
    /** The dataset uploader's case files created at once: the S3 baseline keeps as many PUTs in flight. */
    static final int PUTS_IN_FLIGHT = 16;

    private UploadBenchmark() {}

    public static void main(String[] args) throws Exception {
        String kind = BenchStores.kindArgument(args);
        String[] sizes = BenchStores.withoutKind(args);
        long cases = sizes.length > 0 ? Long.parseLong(sizes[0]) : 1_000_000L;
        Path work = Files.createTempDirectory("vigilo-bench-upload-");
        try (BenchStores stores = BenchStores.of(kind, work)) {
            Path source = work.resolve("cases.jsonl");
            long bytes = generate(source, cases);
            System.out.printf("workload: %,d cases, %.1f MB (%s)%n", cases, bytes / 1e6, source);
            System.out.printf("stores: %s%n", stores.describe());
            try (ControlDatabase control =
                    ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")))) {
                DatasetCatalog catalog = new DatasetCatalog(control.jdbi());
                List<Long> vigilo = new ArrayList<>();
                List<Long> raw = new ArrayList<>();
                for (int round = 0; round < 4; round++) {
                    String storeName = "vigilo-" + round;
                    String rawName = "raw-" + round;
                    long t0 = System.nanoTime();
                    try (ObjectStore store = ObjectStores.open(stores.spec(storeName))) {
                        DatasetEntry entry = catalog.upload(UploadRequest.of(source), store, UploadProgress.NONE);
                        if (entry.caseCount() != cases) {
                            throw new IllegalStateException(
                                    "uploaded " + entry.caseCount() + " cases, expected " + cases);
                        }
                    }
                    long t1 = System.nanoTime();
                    if (stores.isS3()) {
                        try (ObjectStore store = ObjectStores.open(stores.spec(rawName))) {
                            rawHashAndPut(source, store);
                        }
                    } else {
                        rawHashAndWrite(source, work.resolve(rawName));
                    }
                    long t2 = System.nanoTime();
                    stores.delete(storeName, "");
                    if (stores.isS3()) {
                        stores.delete(rawName, "");
                    } else {
                        BenchStores.deleteTree(work.resolve(rawName));
                    }
                    if (round > 0) {
                        vigilo.add(t1 - t0);
                        raw.add(t2 - t1);
                    }
                    System.out.printf(
                            "round %d%s: vigilo %.2f s, raw %.2f s%n",
                            round, round == 0 ? " (warm-up)" : "", (t1 - t0) / 1e9, (t2 - t1) / 1e9);
                }
                double v = median(vigilo) / 1e9;
                double r = median(raw) / 1e9;
                System.out.printf(
                        "%nvigilo dataset upload : %8.2f s  %,12.0f cases/s  %7.1f MB/s%n",
                        v, cases / v, bytes / 1e6 / v);
                System.out.printf(
                        "%-22s: %8.2f s  %,12.0f cases/s  %7.1f MB/s%n",
                        stores.isS3() ? "raw hash+put" : "raw hash+write", r, cases / r, bytes / 1e6 / r);
                System.out.printf(
                        "ratio vigilo/raw time : %8.2fx  (vigilo reaches %.0f%% of the raw throughput)%n",
                        v / r, 100 * r / v);
            }
        } finally {
            BenchStores.deleteTree(work);
        }
    }

    static long generate(Path file, long cases) throws IOException {
        long written = 0;
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 20)) {
            for (long i = 0; i < cases; i++) {
                byte[] line = ("{\"id\":\"case-" + i + "\",\"input\":{\"prompt\":\"Summarize ticket " + i
                                + ": the customer reports intermittent failures after the upgrade.\",\"n\":" + i
                                + "},\"expected\":\"" + (i % 97) + "\",\"group\":\"g" + (i % 7) + "\",\"tags\":[\"t"
                                + (i % 3)
                                + "\",\"bench\"],\"metadata\":{\"source\":\"bench\"}}\n")
                        .getBytes(StandardCharsets.UTF_8);
                out.write(line);
                written += line.length;
            }
        }
        return written;
    }

    /** The floor: hash every byte once and write it once, durably, in 1 MiB files. */
    static void rawHashAndWrite(Path source, Path root) throws IOException {
        Files.createDirectories(root);
        MessageDigest sha = Sha256.newDigest();
        byte[] chunk = new byte[1 << 20];
        int file = 0;
        try (InputStream in = Files.newInputStream(source)) {
            int n;
            while ((n = in.readNBytes(chunk, 0, chunk.length)) > 0) {
                sha.update(chunk, 0, n);
                try (FileChannel ch = FileChannel.open(
                        root.resolve("chunk-" + file++), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                    ch.write(ByteBuffer.wrap(chunk, 0, n));
                    ch.force(true);
                }
            }
        }
        if (sha.digest().length != Sha256.LENGTH) {
            throw new IllegalStateException("digest length");
        }
    }

    /**
     * The S3 floor: hash every byte once and PUT it once as 1 MiB objects, {@link #PUTS_IN_FLIGHT} at a time, each a
     * durable, checksummed create of the product's S3 store.
     */
    static void rawHashAndPut(Path source, ObjectStore store) throws Exception {
        MessageDigest sha = Sha256.newDigest();
        ExecutorService pool = Executors.newFixedThreadPool(PUTS_IN_FLIGHT);
        Deque<Future<ObjectRef>> inFlight = new ArrayDeque<>();
        try (InputStream in = Files.newInputStream(source)) {
            int object = 0;
            while (true) {
                byte[] chunk = in.readNBytes(1 << 20);
                if (chunk.length == 0) {
                    break;
                }
                sha.update(chunk);
                if (inFlight.size() >= PUTS_IN_FLIGHT) {
                    inFlight.removeFirst().get();
                }
                ObjectKey key = ObjectKey.of("chunk-" + object++);
                inFlight.addLast(pool.submit(() -> store.create(key, chunk, Deadline.after(Duration.ofMinutes(2)))));
            }
            while (!inFlight.isEmpty()) {
                inFlight.removeFirst().get();
            }
        } finally {
            pool.shutdownNow();
        }
        if (sha.digest().length != Sha256.LENGTH) {
            throw new IllegalStateException("digest length");
        }
    }

    static long median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        sorted.sort(Long::compare);
        return sorted.get(sorted.size() / 2);
    }
}
