package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

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
import dev.vigilo.exec.settlement.RunRerun;
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
 * A run that reran its errors, on the dashboard: the run page shows the final gates, and under "Rerun history" the
 * earlier settlement (its verdict and gate counts) and which cases were executed again, by error type.
 */
class RerunHistoryPageTest {
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
    void theRunPageShowsTheEarlierSettlementAndTheRerunCases() throws IOException {
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
        placements = Placements.open(control, ExecutionConfig.defaults());
        StorageConfig storage = StorageConfig.localDefault(home.resolve("objects"));
        store = ObjectStores.open(storage.defaultStore());
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            lines.append("{\"id\":\"c")
                    .append(i)
                    .append("\",\"input\":\"what is ")
                    .append(i)
                    .append(" * 2\",\"expected\":\"")
                    .append(i * 2)
                    .append("\"}\n");
        }
        Path cases = Files.writeString(home.resolve("cases.jsonl"), lines.toString());
        DatasetEntry dataset = new DatasetCatalog(control.jdbi())
                .upload(
                        new UploadRequest(cases, Optional.of("rerun"), Optional.of(UUID.randomUUID())),
                        store,
                        UploadProgress.NONE);
        Path marker = Files.writeString(home.resolve("broken"), "");
        Path agent = home.resolve("agent.sh");
        Files.writeString(agent, """
                n=$(sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
                if [ -e "%s" ] && [ $((n %% 3)) -eq 0 ]; then exit 3; fi
                echo $((n * 2))
                """.formatted(marker));
        String profile = """
                name: rerun-page
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 60}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 1}
                """.formatted(agent);
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
        new Worker(placements, storage, fast, Worker.Listener.NONE).run();
        Files.delete(marker);
        assertThat(new RunRerun(placements, storage).rerun(run).outcome()).isEqualTo(RunRerun.Outcome.REOPENED);
        new Worker(placements, storage, fast, Worker.Listener.NONE).run();

        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                DashboardSources.all(control.jdbi(), placements, storage, Optional.empty(), List.of(), List.of(home)));
        HttpResponse<String> page = Http.get("http://127.0.0.1:" + dashboard.port() + "/runs/" + run);
        assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
        assertThat(page.body())
                .contains("id=\"run-verdict\">verdict: passed")
                .contains("<h2>Rerun history</h2>")
                .contains("Settlement 1: settled, verdict failed")
                .contains("to run 2 errored cases again")
                .contains("<td>all</td><td>6</td><td>4</td><td>0</td><td>2</td><td>failed</td>")
                .contains("<span class=\"mono\">nonzero_exit</span> (2): c0, c3");
        com.fasterxml.jackson.databind.JsonNode api = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(Http.get("http://127.0.0.1:" + dashboard.port() + "/api/runs/" + run)
                        .body());
        assertThat(api.path("verdict").asText()).isEqualTo("passed");
        assertThat(api.at("/reruns/0/verdict").asText()).isEqualTo("failed");
        assertThat(api.at("/reruns/0/gates/0/errored").asInt()).isEqualTo(2);
        assertThat(api.at("/reruns/0/rerun_by_type/nonzero_exit/1").asText()).isEqualTo("c3");
    }
}
