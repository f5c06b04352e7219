package dev.vigilo.web;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * A run the live-page tests watch while a real worker executes it: 200 cases {@code item-0..item-199} in two chunks of
 * 100, a command agent answering {@code ok} (right) except for every fourth case ({@code wrong}), one gate {@code all}
 * on exact match at 0.5. The first case of whichever chunk starts second waits until {@link #release()} (a file the
 * agent looks for), so after the first chunk the run stays running, with 100 cases executed (75 passed), for as long
 * as the test looks. Admitted, pending, with no worker until {@link #startWorker()}; in a control database and a
 * local store of its own, closed with it.
 */
final class LiveRun implements AutoCloseable {
    final UUID run;
    /** A fresh control database (its run's placement), the local store under the home; closed with the run. */
    final ControlDatabase control;

    final Placements placements;
    final StorageConfig storage;
    final ObjectStore store;
    private final Path home;
    private final Path gate;
    private Thread worker;

    LiveRun(Path home) throws IOException {
        this.home = home;
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
        placements = Placements.open(control, ExecutionConfig.defaults());
        storage = StorageConfig.localDefault(home.resolve("objects"));
        store = ObjectStores.open(storage.defaultStore());
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            lines.append("{\"id\":\"c")
                    .append(i)
                    .append("\",\"input\":\"item-")
                    .append(i)
                    .append("-end\",\"expected\":\"ok\"}\n");
        }
        Path cases = Files.writeString(home.resolve("live-cases.jsonl"), lines.toString());
        DatasetEntry dataset = new DatasetCatalog(control.jdbi())
                .upload(
                        new UploadRequest(cases, Optional.of("live"), Optional.of(UUID.randomUUID())),
                        store,
                        UploadProgress.NONE);
        gate = home.resolve("live-gate");
        Files.createDirectories(gate);
        Path agent = home.resolve("live-agent.sh");
        Files.writeString(agent, """
                n=$(sed -n 's/.*item-\\([0-9]*\\)-end.*/\\1/p')
                if [ $((n %% 100)) -eq 0 ] && ! mkdir "%1$s/started" 2>/dev/null; then
                  while [ ! -e "%1$s/release" ]; do sleep 0.05; done
                fi
                if [ $((n %% 4)) -eq 3 ]; then echo wrong; else echo ok; fi
                """.formatted(gate));
        String profile = """
                name: live-page
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 300}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                """.formatted(agent);
        run = UUID.randomUUID();
        new RunPreparation(control.jdbi(), storage)
                .create(new CreateRequest(ProfileInput.inline(profile), dataset.uploadId(), Optional.of(run), false));
        new Admission(placements, storage).admit(run);
    }

    /** What a dashboard over this run's databases and store reads, the home's transcripts listed. */
    DashboardSources sources() {
        return DashboardSources.all(control.jdbi(), placements, storage, Optional.empty(), List.of(), List.of(home));
    }

    /** Starts a real worker (one case at a time, exits once idle) on a thread of its own. */
    void startWorker() {
        Worker.Options fast = new Worker.Options(
                1,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofSeconds(5));
        worker = new Thread(() -> new Worker(placements, storage, fast, Worker.Listener.NONE).run(), "live-worker");
        worker.start();
    }

    /** Lets the waiting case answer: the run completes. */
    void release() throws IOException {
        Files.writeString(gate.resolve("release"), "go");
    }

    /** Waits for the worker to exit (it does once the run settled). */
    void awaitWorker() throws InterruptedException {
        worker.join(Duration.ofMinutes(2).toMillis());
    }

    @Override
    public void close() throws Exception {
        try (control;
                placements;
                store) {
            if (worker != null && worker.isAlive()) {
                release();
                worker.join(Duration.ofMinutes(1).toMillis());
            }
        }
    }
}
