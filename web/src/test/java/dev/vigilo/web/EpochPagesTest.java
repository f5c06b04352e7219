package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.Placements;
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
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run of three epochs on the dashboard, executed by a real worker with a command agent that answers by its
 * {@code VIGILO_EPOCH}: the run page's gate table shows pass@k, the case page lists each epoch with links to its
 * transcripts, the transcript page and its API take {@code epoch=}, and an epoch the run does not have is a 400 (for a
 * run of one epoch, anything but 1).
 */
class EpochPagesTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    static Path home;

    static ControlDatabase control;
    static Placements placements;
    static ObjectStore store;
    static Dashboard dashboard;
    static String base;
    static UUID epochs;
    static UUID single;

    @BeforeAll
    static void start() throws IOException {
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
        placements = Placements.open(control, ExecutionConfig.defaults());
        StorageConfig storage = StorageConfig.localDefault(home.resolve("objects"));
        store = ObjectStores.open(storage.defaultStore());
        // Four cases; the agent answers input.answer, except for c0 in epoch 2 and for c1 in epochs 1 and 2. So the
        // gate passes 2, 1, 3, 3 epochs of c0..c3: pass@1 = (2/3 + 1/3 + 2) / 4 = 0.75, pass@3 = 1.
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 4; i++) {
            lines.append("{\"id\":\"c%d\",\"input\":{\"answer\":\"%d\"},\"expected\":\"%d\"}\n".formatted(i, i, i));
        }
        Path cases = Files.writeString(home.resolve("cases.jsonl"), lines);
        DatasetEntry dataset = new DatasetCatalog(control.jdbi())
                .upload(
                        new UploadRequest(cases, Optional.of("epochs"), Optional.of(UUID.randomUUID())),
                        store,
                        UploadProgress.NONE);
        Path agent = Files.writeString(home.resolve("agent.sh"), """
                a=$(sed -n 's/.*"answer":"\\([^"]*\\)".*/\\1/p')
                if [ "$a" = 0 ] && [ "$VIGILO_EPOCH" = 2 ]; then echo wrong; exit 0; fi
                if [ "$a" = 1 ] && [ "$VIGILO_EPOCH" != 3 ]; then echo wrong; exit 0; fi
                echo "$a"
                """);
        String profile = """
                name: epochs
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 30}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                """.formatted(agent);
        epochs = prepare(storage, dataset, profile + "epochs: {count: 3, reducer: majority}\n");
        single = prepare(storage, dataset, profile);
        Worker.Options fast = new Worker.Options(
                2,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofSeconds(5));
        new Worker(placements, storage, fast, Worker.Listener.NONE, home).run();
        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                DashboardSources.all(control.jdbi(), placements, storage, Optional.empty(), List.of(), List.of(home)));
        base = "http://127.0.0.1:" + dashboard.port();
    }

    private static UUID prepare(StorageConfig storage, DatasetEntry dataset, String profile) {
        UUID run = UUID.randomUUID();
        new RunPreparation(control.jdbi(), storage)
                .create(new CreateRequest(ProfileInput.inline(profile), dataset.uploadId(), Optional.of(run), false));
        new Admission(placements, storage).admit(run);
        return run;
    }

    @AfterAll
    static void stop() {
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

    private static String page(String path) {
        HttpResponse<String> r = Http.get(base + path);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return r.body();
    }

    private static JsonNode json(String path) throws IOException {
        return MAPPER.readTree(page(path));
    }

    @Test
    void theRunPageAndItsApiShowPassAtK() throws IOException {
        ExecutionStatus s = new ExecutionStatusReader(placements).status(epochs);
        assertThat(s.status()).isEqualTo("settled");
        GateResult all = s.gates().get(0);
        assertThat(all.passAtKByK().get("1")).isCloseTo(0.75, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(all.passAtKByK().get("3")).isEqualTo(1.0);
        String html = page("/runs/" + epochs);
        assertThat(html)
                .contains("<th title=\"Over the epochs")
                .contains(String.format(
                        Locale.ROOT,
                        "<td class=\"num pass-at-k\">pass@1 %.2f · pass@2 %.2f · pass@3 1.00</td>",
                        all.passAtKByK().get("1"),
                        all.passAtKByK().get("2")));
        JsonNode api = json("/api/runs/" + epochs);
        assertThat(api.at("/gates/0/pass_at_k/3").asDouble()).isEqualTo(1.0);
        assertThat(api.at("/gates/0/pass_at_k/1").asDouble())
                .isEqualTo(all.passAtKByK().get("1"));
        // A run of one epoch has neither the column nor the key.
        assertThat(page("/runs/" + single)).doesNotContain("pass-at-k").doesNotContain("pass@");
        assertThat(json("/api/runs/" + single).at("/gates/0").has("pass_at_k")).isFalse();
    }

    @Test
    void theCasePageListsEachEpochWithItsTranscripts() throws IOException {
        String html = page("/runs/" + epochs + "/cases/1");
        assertThat(html)
                .contains("id=\"epochs\"")
                .contains("all: 1 of 3 epochs passed")
                .contains("<tr id=\"epoch-1\"><td class=\"num\">1</td><td><span class=\"badge verdict-failed\">")
                .contains("<tr id=\"epoch-3\"><td class=\"num\">3</td><td><span class=\"badge verdict-passed\">")
                .contains("href=\"/runs/" + epochs + "/cases/1/transcript?epoch&#61;2&amp;attempt&#61;1\"")
                .contains("Epoch 3, attempt 1");
        JsonNode c = json("/api/runs/" + epochs + "/cases/1");
        assertThat(c.at("/result/epoch_passes/all").asInt()).isEqualTo(1);
        assertThat(c.at("/result/output").isNull()).isTrue();
        JsonNode e1 = c.at("/result/epochs/0");
        assertThat(e1.get("epoch").asInt()).isEqualTo(1);
        assertThat(e1.get("outcome").asText()).isEqualTo("failed");
        assertThat(e1.get("output").asText()).isEqualTo("wrong");
        assertThat(e1.has("case_id")).isFalse();
        assertThat(c.at("/result/epochs/2/output").asText()).isEqualTo("1");
        assertThat(c.at("/result/epochs/2/transcripts/0/api").asText())
                .isEqualTo("/api/runs/" + epochs + "/cases/1/transcript?epoch=3&attempt=1");
        // A one-epoch case keeps its page and API as they were.
        assertThat(page("/runs/" + single + "/cases/1")).doesNotContain("id=\"epochs\"");
        assertThat(json("/api/runs/" + single + "/cases/1").at("/result").has("epochs"))
                .isFalse();
    }

    @Test
    void theTranscriptPageTakesAnEpoch() throws IOException {
        // Each epoch's transcript is its own slice of the chunk's transcript containers: the page names its key and
        // where it starts, as the case's API lists them per epoch.
        JsonNode c = json("/api/runs/" + epochs + "/cases/0");
        JsonNode t1 = c.at("/result/epochs/0/transcripts/0");
        JsonNode t2 = c.at("/result/epochs/1/transcripts/0");
        assertThat(t1.get("offset").asLong()).isNotEqualTo(t2.get("offset").asLong());
        String second = page("/runs/" + epochs + "/cases/0/transcript?epoch=2");
        assertThat(second)
                .contains("<span id=\"transcript-epoch\">epoch 2 of 3</span>")
                .contains(
                        t2.get("key").asText() + " at byte " + t2.get("offset").asLong())
                .contains("class=\"current\" id=\"epoch-2\"");
        assertThat(page("/runs/" + epochs + "/cases/0/transcript")).contains("epoch 3 of 3");
        JsonNode api = json("/api/runs/" + epochs + "/cases/0/transcript?epoch=1");
        assertThat(api.get("epoch").asInt()).isEqualTo(1);
        assertThat(api.get("epochs").asInt()).isEqualTo(3);
        assertThat(api.at("/transcript/key").asText()).isEqualTo(t1.get("key").asText());
        assertThat(api.at("/transcript/offset").asLong())
                .isEqualTo(t1.get("offset").asLong());
        HttpResponse<String> beyond = Http.get(base + "/runs/" + epochs + "/cases/0/transcript?epoch=4");
        assertThat(beyond.statusCode()).isEqualTo(400);
        assertThat(beyond.body()).contains("ran each case 3 times (epochs); choose 1 to 3");
        HttpResponse<String> none = Http.get(base + "/api/runs/" + single + "/cases/0/transcript?epoch=2");
        assertThat(none.statusCode()).isEqualTo(400);
        assertThat(none.body()).contains("ran each case once (one epoch)");
        assertThat(page("/runs/" + single + "/cases/0/transcript?epoch=1")).doesNotContain("transcript-epoch");
    }
}
