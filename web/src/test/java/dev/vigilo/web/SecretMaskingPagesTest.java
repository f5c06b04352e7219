package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.SecretLeaks;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dashboard shows the mask, never the key, where an endpoint, an agent or an evaluator gave a run's API key back
 * ({@link SecretLeaks}): case pages, transcript pages and their API, over runs a real worker executed with the key
 * in its environment.
 */
class SecretMaskingPagesTest {
    @TempDir
    static Path home;

    static ControlDatabase control;
    static Placements placements;
    static StorageConfig storage;
    static ObjectStore store;
    static OpenAiTestServer endpoint;
    static String key;
    static UUID httpRun;
    static UUID commandRun;
    static Dashboard dashboard;
    static String base;

    @BeforeAll
    static void start() throws IOException {
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
        placements = Placements.open(control, ExecutionConfig.defaults());
        storage = StorageConfig.localDefault(home.resolve("objects"));
        store = ObjectStores.open(storage.defaultStore());
        endpoint = OpenAiTestServer.start();
        SecretLeaks.echoingEndpoint(endpoint);
        key = SecretLeaks.newKey();
        Path[] scripts = SecretLeaks.scripts(home);
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            cases.append("{\"id\":\"case-")
                    .append(i)
                    .append("\",\"input\":\"what is ")
                    .append(i)
                    .append(" * 2\",\"expected\":\"")
                    .append(i * 2)
                    .append("\"}\n");
        }
        Path file = home.resolve("cases.jsonl");
        Files.writeString(file, cases.toString());
        DatasetEntry dataset = new DatasetCatalog(control.jdbi())
                .upload(
                        new UploadRequest(file, Optional.of("leaks"), Optional.of(UUID.randomUUID())),
                        store,
                        UploadProgress.NONE);
        httpRun = prepare(dataset, SecretLeaks.httpProfile(endpoint, scripts[1]));
        commandRun = prepare(dataset, SecretLeaks.commandProfile(scripts[0], scripts[1]));
        Worker.Options fast = new Worker.Options(
                2,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofSeconds(5));
        SecretLeaks.worker(placements, storage, fast, key).run();
        for (UUID run : List.of(httpRun, commandRun)) {
            assertThat(new ExecutionStatusReader(placements).status(run).status())
                    .isEqualTo("settled");
        }
        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                DashboardSources.all(control.jdbi(), placements, storage, Optional.empty(), List.of(), List.of(home)));
        base = "http://127.0.0.1:" + dashboard.port();
    }

    @AfterAll
    static void stop() {
        if (dashboard != null) {
            dashboard.close();
        }
        if (endpoint != null) {
            endpoint.close();
        }
        if (store != null) {
            store.close();
        }
        if (placements != null) {
            placements.close();
        }
        if (control != null) {
            control.close();
        }
    }

    private static UUID prepare(DatasetEntry dataset, String profile) {
        UUID run = UUID.randomUUID();
        new RunPreparation(control.jdbi(), storage)
                .create(new CreateRequest(ProfileInput.inline(profile), dataset.uploadId(), Optional.of(run), false));
        new Admission(placements, storage).admit(run);
        return run;
    }

    /** The body of a 200 answer, which holds no 12 characters of the key. */
    private static String get(String path) {
        HttpResponse<String> r = Http.get(base + path);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        for (int i = 0; i + 12 <= key.length(); i++) {
            assertThat(r.body()).as(path).doesNotContain(key.substring(i, i + 12));
        }
        return r.body();
    }

    @Test
    void caseAndTranscriptPagesOfAnHttpRunShowTheMask() {
        // 401 whose body echoed the key: the case's error and the transcript's answer
        assertThat(get("/api/runs/" + httpRun + "/cases/0")).contains("bad key Bearer ***");
        assertThat(get("/runs/" + httpRun + "/cases/0")).contains("bad key Bearer ***");
        assertThat(get("/api/runs/" + httpRun + "/cases/0/transcript?attempt=1"))
                .contains("bad key Bearer ***");
        // 503 whose body is not JSON, then an answer with the key in its content
        assertThat(get("/runs/" + httpRun + "/cases/1/transcript?attempt=1"))
                .contains("upstream failed for Authorization: Bearer ***");
        assertThat(get("/runs/" + httpRun + "/cases/1")).contains("your key is ***", "evaluator saw ***");
        assertThat(get("/api/runs/" + httpRun + "/cases/1")).contains("your key is ***");
        assertThat(get("/api/runs/" + httpRun + "/cases?limit=10")).contains("***");
        get("/runs/" + httpRun + "/cases");
    }

    @Test
    void caseAndTranscriptPagesOfACommandRunShowTheMask() {
        assertThat(get("/runs/" + commandRun + "/cases/0")).contains("I will call the API with ***", "answer ***");
        assertThat(get("/api/runs/" + commandRun + "/cases/0/transcript")).contains("accepted ***");
        assertThat(get("/runs/" + commandRun + "/cases/2/transcript?attempt=2")).contains("agent stderr holds ***");
        assertThat(get("/api/runs/" + commandRun + "/cases/5")).contains("stderr ends: *** end");
        get("/runs/" + commandRun + "/cases/3");
    }
}
