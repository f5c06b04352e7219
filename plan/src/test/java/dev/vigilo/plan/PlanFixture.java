package dev.vigilo.plan;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectInfo;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** A real control database, a local object store and an uploaded dataset. */
final class PlanFixture implements AutoCloseable {
    static final String PROFILE = """
            name: fixture
            agent: {kind: command, command: [./agent]}
            evaluators:
              - {name: exact, kind: exact_match}
              - {name: re, kind: regex, applies_to: {groups: [math]}}
            gates:
              - {name: all, required_evaluators: [exact], min_pass_rate: 0.9}
              - {name: math, required_evaluators: [exact, re], min_pass_rate: 0.5}
              - {name: hard, required_evaluators: [exact], tags_any: [hard], min_pass_rate: 0.5}
            """;

    final String url;
    final ControlDatabase control;
    final Path storeRoot;
    final StorageConfig storage;
    final ObjectStore store;
    final DatasetEntry dataset;

    PlanFixture(Path dir, int cases, UUID uploadId) throws IOException {
        url = TestPostgres.newDatabaseUrl();
        control = ControlDatabase.open(new ControlSettings.Jdbc(url));
        storeRoot = dir.resolve("objects");
        storage = StorageConfig.localDefault(storeRoot);
        store = ObjectStores.open(storage.defaultStore());
        Files.createDirectories(dir);
        Path source = dir.resolve("cases.jsonl");
        writeCases(source, cases);
        dataset = new DatasetCatalog(control.jdbi())
                .upload(
                        new UploadRequest(source, Optional.of("fixture"), Optional.of(uploadId)),
                        store,
                        UploadProgress.NONE);
    }

    static void writeCases(Path file, int cases) throws IOException {
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

    RunPreparation preparation(PreparationOptions options) {
        return new RunPreparation(control.jdbi(), storage, options);
    }

    /**
     * Repeats the creation of {@code run} over {@code upload} (with a {@code leaseMillis} creation lease, renewed every
     * quarter of it, groups of 4 files) until a dead creator's lease has expired, polling every {@code pollMillis};
     * whether it had to wait. Gives up after 60 s.
     */
    boolean repeatUntilLeaseExpired(UUID run, UUID upload, Path profile, long leaseMillis, long pollMillis)
            throws InterruptedException {
        boolean waited = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                preparation(new PreparationOptions(
                                Duration.ofMillis(leaseMillis),
                                Duration.ofMillis(leaseMillis / 4),
                                Duration.ofSeconds(30),
                                4,
                                PreparationOptions.Hooks.NONE))
                        .create(new CreateRequest(ProfileInput.file(profile), upload, Optional.of(run), false));
                return waited;
            } catch (ConflictException live) {
                if (System.nanoTime() > deadline) {
                    throw live;
                }
                waited = true;
                Thread.sleep(pollMillis);
            }
        }
    }

    static PreparationOptions fast() {
        return new PreparationOptions(
                Duration.ofSeconds(30),
                Duration.ofSeconds(1),
                Duration.ofSeconds(30),
                8,
                PreparationOptions.Hooks.NONE);
    }

    /** Every plan file of the run: key to bytes. */
    TreeMap<String, byte[]> planFiles(UUID runId) {
        TreeMap<String, byte[]> out = new TreeMap<>();
        for (ObjectInfo info : store.list(PlanLayout.prefix(runId), Deadline.after(Duration.ofSeconds(60)))) {
            try {
                out.put(
                        info.key().value(),
                        Files.readAllBytes(storeRoot.resolve(info.key().value())));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
        return out;
    }

    Path fileOf(ObjectRef ref) {
        return storeRoot.resolve(ref.key().value());
    }

    @Override
    public void close() {
        store.close();
        control.close();
    }
}
