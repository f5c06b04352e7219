package dev.vigilo.bench;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StoreSpec;
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
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Dataset upload throughput against a raw baseline, in one run.
 *
 * <p>Workload: a generated JSONL file of {@code CASES} cases (default 1,000,000, ~250 bytes each). Vigilo: a full
 * {@code dataset upload} (validation pass, store pass with content-addressed case files and index into a local
 * object store, catalog row in an embedded PostgreSQL). Baseline: reading the same file, hashing it with SHA-256
 * and writing its bytes as 1 MiB files, each fsynced (the durability every Vigilo case file gets). Each side runs
 * once to warm up and then three times, alternating; the median is reported.
 *
 * <p>Run: {@code bench/run upload [CASES]}.
 */
public final class UploadBenchmark {
    private UploadBenchmark() {}

    public static void main(String[] args) throws Exception {
        long cases = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000L;
        Path work = Files.createTempDirectory("vigilo-bench-upload-");
        try {
            Path source = work.resolve("cases.jsonl");
            long bytes = generate(source, cases);
            System.out.printf("workload: %,d cases, %.1f MB (%s)%n", cases, bytes / 1e6, source);
            try (ControlDatabase control =
                    ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")))) {
                DatasetCatalog catalog = new DatasetCatalog(control.jdbi());
                List<Long> vigilo = new ArrayList<>();
                List<Long> raw = new ArrayList<>();
                for (int round = 0; round < 4; round++) {
                    Path storeRoot = work.resolve("objects-" + round);
                    Path rawRoot = work.resolve("raw-" + round);
                    long t0 = System.nanoTime();
                    try (ObjectStore store = ObjectStores.open(new StoreSpec.Local("bench", storeRoot))) {
                        DatasetEntry entry = catalog.upload(UploadRequest.of(source), store, UploadProgress.NONE);
                        if (entry.caseCount() != cases) {
                            throw new IllegalStateException(
                                    "uploaded " + entry.caseCount() + " cases, expected " + cases);
                        }
                    }
                    long t1 = System.nanoTime();
                    rawHashAndWrite(source, rawRoot);
                    long t2 = System.nanoTime();
                    deleteTree(storeRoot);
                    deleteTree(rawRoot);
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
                        "raw hash+write        : %8.2f s  %,12.0f cases/s  %7.1f MB/s%n",
                        r, cases / r, bytes / 1e6 / r);
                System.out.printf(
                        "ratio vigilo/raw time : %8.2fx  (vigilo reaches %.0f%% of the raw throughput)%n",
                        v / r, 100 * r / v);
            }
        } finally {
            deleteTree(work);
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

    static long median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        sorted.sort(Long::compare);
        return sorted.get(sorted.size() / 2);
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
