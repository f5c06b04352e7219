package dev.vigilo.exec;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.CreateResult;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StorageConfig;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;

/** A real control database, a local object store, an uploaded dataset and prepared runs over it. */
public final class ExecFixture implements AutoCloseable {
    public static final String PROFILE = """
            name: exec-fixture
            agent: {kind: command, command: [./agent]}
            evaluators:
              - {name: exact, kind: exact_match}
              - {name: re, kind: regex, applies_to: {groups: [math]}}
            gates:
              - {name: all, required_evaluators: [exact], min_pass_rate: 0.9}
              - {name: math, required_evaluators: [exact, re], min_pass_rate: 0.5}
            """;

    final String controlUrl;
    public final ControlDatabase control;
    public final Path storeRoot;
    public final StorageConfig storage;
    public final ObjectStore store;
    final DatasetEntry dataset;

    public ExecFixture(Path dir, int cases) throws IOException {
        this(dir, cases, StorageConfig.localDefault(dir.resolve("objects")));
    }

    /** A fixture whose dataset and runs live in {@code storage}'s default store (a local one under dir, or S3). */
    public ExecFixture(Path dir, int cases, StorageConfig storage) throws IOException {
        controlUrl = TestPostgres.newDatabaseUrl();
        control = ControlDatabase.open(new ControlSettings.Jdbc(controlUrl));
        storeRoot = dir.resolve("objects");
        this.storage = storage;
        store = ObjectStores.open(storage.defaultStore());
        Path source = dir.resolve("cases.jsonl");
        writeCases(source, cases);
        dataset = new DatasetCatalog(control.jdbi())
                .upload(
                        new UploadRequest(source, Optional.of("exec"), Optional.of(UUID.randomUUID())),
                        store,
                        UploadProgress.NONE);
    }

    private ExecFixture(String controlUrl, Path storeRoot, DatasetEntry dataset) {
        this.controlUrl = controlUrl;
        this.control = ControlDatabase.open(new ControlSettings.Jdbc(controlUrl));
        this.storeRoot = storeRoot;
        this.storage = StorageConfig.localDefault(storeRoot);
        this.store = ObjectStores.open(storage.defaultStore());
        this.dataset = dataset;
    }

    /**
     * A fixture under {@code dir} whose control database and object store are copies of {@code template}'s, with its
     * dataset and runs: for tests that start many times from one prepared state. {@code template} must be closed.
     */
    static ExecFixture copyOf(ExecFixture template, Path dir) throws IOException {
        String url = TestPostgres.copyOfDatabase(template.controlUrl);
        Path root = dir.resolve("objects");
        try (Stream<Path> files = Files.walk(template.storeRoot)) {
            for (Path from : (Iterable<Path>) files::iterator) {
                Path to = root.resolve(template.storeRoot.relativize(from).toString());
                if (Files.isDirectory(from)) {
                    Files.createDirectories(to);
                } else {
                    Files.copy(from, to);
                }
            }
        }
        ExecFixture copy = new ExecFixture(url, root, template.dataset);
        // Records name their store by its binding, which for a local store is its directory: point them at the copy.
        copy.control.jdbi().useHandle(h -> {
            for (String table : List.of("dataset_uploads", "run_plans")) {
                h.createUpdate("UPDATE " + table + " SET storage_binding = :to WHERE storage_binding = :from")
                        .bind("from", template.storage.defaultStore().binding().value())
                        .bind("to", copy.storage.defaultStore().binding().value())
                        .execute();
            }
        });
        return copy;
    }

    static void writeCases(Path file, int cases) throws IOException {
        Files.createDirectories(file.getParent());
        try (BufferedWriter w = Files.newBufferedWriter(file)) {
            for (int i = 0; i < cases; i++) {
                String group = i % 3 == 0 ? ",\"group\":\"math\"" : "";
                w.write("{\"id\":\"case-" + i + "\",\"input\":\"what is " + i + " * 2\",\"expected\":\"" + (i * 2)
                        + "\"" + group + "}\n");
            }
        }
    }

    /** Prepares a run with execution requested (the run stays creating until admitted). */
    public UUID prepare(String profile) {
        CreateResult r = create(profile, UUID.randomUUID());
        control.jdbi()
                .useHandle(h -> h.createUpdate("UPDATE run_plans SET execution_requested = true WHERE run_id = :r")
                        .bind("r", r.runId())
                        .execute());
        return r.runId();
    }

    /** {@code vigilo run create --prepare-only} with this run id (a first call or a repeat). */
    CreateResult create(String profile, UUID runId) {
        return new RunPreparation(control.jdbi(), storage)
                .create(new CreateRequest(ProfileInput.inline(profile), dataset.uploadId(), Optional.of(runId), true));
    }

    public UUID prepare() {
        return prepare(PROFILE);
    }

    /** Freezes the run's placement list, as preparation does from the execution configuration. */
    public void placeOn(UUID run, ExecutionConfig config) {
        control.jdbi()
                .useHandle(h -> h.createUpdate("UPDATE run_plans SET initial_placement = :p WHERE run_id = :r")
                        .bind("p", config.initialPlacement())
                        .bind("r", run)
                        .execute());
    }

    /** The run's published plan, read through its recorded root. */
    PublishedPlan plan(UUID run) {
        ObjectRef root = control.jdbi()
                .withHandle(h -> h.createQuery(
                                "SELECT root_key, root_length, root_sha256 FROM run_plans" + " WHERE run_id = :r")
                        .bind("r", run)
                        .map((rs, ctx) -> new ObjectRef(
                                ObjectKey.of(rs.getString(1)), rs.getLong(2), Sha256.parseHex(rs.getString(3))))
                        .one());
        return PublishedPlan.open(run, root, store, Deadline.after(Duration.ofSeconds(30)));
    }

    /** Sets a column of the run row (tests that stage a status). */
    void setRunStatus(UUID run, String status) {
        control.jdbi()
                .useHandle(h -> h.createUpdate("UPDATE runs SET status = :s WHERE run_id = :r")
                        .bind("s", status)
                        .bind("r", run)
                        .execute());
    }

    public String runStatus(UUID run) {
        return control.jdbi()
                .withHandle(h -> h.createQuery("SELECT status FROM runs WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(String.class)
                        .one());
    }

    /** The reason a failed run recorded (null while it has none), for assertion messages. */
    public String failureReason(UUID run) {
        return control.jdbi()
                .withHandle(h -> h.createQuery("SELECT failure_reason FROM runs WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(String.class)
                        .one());
    }

    @Override
    public void close() {
        store.close();
        control.close();
    }
}
