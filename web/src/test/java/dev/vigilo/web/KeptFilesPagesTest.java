package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.agent.SandboxSupport;
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
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The files a sandboxed run kept, on the dashboard: the case page lists them with download links, the case API lists
 * their references, and a download is the stored bytes (verified), served as an attachment, never rendered.
 */
class KeptFilesPagesTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    Path home;

    ControlDatabase control;
    Placements placements;
    ObjectStore store;
    Dashboard dashboard;

    @AfterEach
    void stop() {
        if (dashboard != null) {
            dashboard.close();
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

    @Test
    void theCasePageListsKeptFilesAndServesThemAsDownloads() throws IOException {
        SandboxSupport.requireBwrap();
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
        placements = Placements.open(control, ExecutionConfig.defaults());
        StorageConfig storage = StorageConfig.localDefault(home.resolve("objects"));
        store = ObjectStores.open(storage.defaultStore());
        Path cases =
                Files.writeString(home.resolve("cases.jsonl"), "{\"id\":\"c0\",\"input\":\"x\",\"expected\":\"ok\"}\n");
        DatasetEntry dataset = new DatasetCatalog(control.jdbi())
                .upload(
                        new UploadRequest(cases, Optional.of("kept"), Optional.of(UUID.randomUUID())),
                        store,
                        UploadProgress.NONE);
        Path task = Files.createDirectories(home.resolve("task"));
        Files.writeString(task.resolve("agent.sh"), "printf '<script>alert(1)</script>' > fix.patch; echo ok\n");
        String profile = """
                name: kept
                agent: {kind: command, command: [sh, agent.sh], max_attempts: 1, timeout_seconds: 60}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 1}
                sandbox: {kind: bwrap, workdir: "%s", keep_files: ["*.patch"]}
                """.formatted(task);
        UUID run = UUID.randomUUID();
        new RunPreparation(control.jdbi(), storage)
                .create(new CreateRequest(ProfileInput.inline(profile), dataset.uploadId(), Optional.of(run), false));
        new Admission(placements, storage).admit(run);
        Worker.Options fast = new Worker.Options(
                1,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofSeconds(5));
        // The agent's directory is this test's; sandboxes go under the default root (the temporary directory's).
        new Worker(placements, storage, fast, Worker.Listener.NONE, home).run();
        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                DashboardSources.all(control.jdbi(), placements, storage, Optional.empty(), List.of(), List.of(home)));
        String base = "http://127.0.0.1:" + dashboard.port();

        HttpResponse<String> page = Http.get(base + "/runs/" + run + "/cases/0");
        assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
        assertThat(page.body())
                .contains("<h2>Kept files</h2>")
                .contains("<a href=\"/runs/" + run + "/cases/0/files/0\" download>fix.patch</a>");
        JsonNode api =
                MAPPER.readTree(Http.get(base + "/api/runs/" + run + "/cases/0").body());
        assertThat(api.at("/result/kept_files/0/path").asText()).isEqualTo("fix.patch");
        assertThat(api.at("/result/kept_files/0/key").asText()).startsWith("runs/" + run + "/files/");
        HttpResponse<String> file = Http.get(base + "/runs/" + run + "/cases/0/files/0");
        assertThat(file.statusCode()).isEqualTo(200);
        assertThat(file.body()).isEqualTo("<script>alert(1)</script>");
        assertThat(file.headers().firstValue("Content-Type")).contains("application/octet-stream");
        assertThat(file.headers().firstValue("Content-Disposition")).contains("attachment; filename=\"fix.patch\"");
        assertThat(Http.get(base + "/runs/" + run + "/cases/0/files/1").statusCode())
                .isEqualTo(404);
    }
}
