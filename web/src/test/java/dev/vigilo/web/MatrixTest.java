package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.view.RunResults;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The matrix over HTTP: the quickstart's settled run and a second run of the same dataset whose agent (a real child
 * process) answers "42" to everything, so some cases flip; every row, the different-only and regressions-only views
 * and keyset pages agree with what {@code vigilo run results} says of each run, computed here independently.
 */
class MatrixTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    static Path home;

    static QuickstartState state;
    static Dashboard dashboard;
    static String base;
    static UUID second;
    /** Per run, case id to outcome, from the results. */
    static List<Map<String, String>> outcomes = new ArrayList<>();

    @BeforeAll
    static void start() throws IOException {
        state = new QuickstartState(home);
        Path agent = Files.writeString(home.resolve("forty-two.sh"), "cat > /dev/null\necho 42\n");
        String profile = new String(
                        QuickstartState.resource("examples/quickstart-profile.yaml"), StandardCharsets.UTF_8)
                .replace(
                        "command: [java, -XX:TieredStopAtLevel=1, -XX:+UseSerialGC, examples/agent/QuickAgent.java]",
                        "command: [sh, \"" + agent + "\"]");
        assertThat(profile).contains("forty-two.sh");
        second = UUID.randomUUID();
        new RunPreparation(state.control.jdbi(), state.storage)
                .create(new CreateRequest(
                        ProfileInput.inline(profile), state.dataset.uploadId(), Optional.of(second), false));
        new Admission(state.placements, state.storage).admit(second);
        Worker.Options fast = new Worker.Options(
                2,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofSeconds(5));
        // Runs every pending run to its end: the second run, and the quickstart's pending one.
        new Worker(state.placements, state.storage, fast, Worker.Listener.NONE, home).run();
        for (UUID run : List.of(state.settledRun, second)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            new RunResults(state.placements, state.storage).write(run, out);
            Map<String, String> m = new LinkedHashMap<>();
            for (String l : out.toString(StandardCharsets.UTF_8).split("\n")) {
                if (!l.isBlank()) {
                    JsonNode line = MAPPER.readTree(l);
                    m.put(line.path("case_id").asText(), outcome(line));
                }
            }
            outcomes.add(m);
        }
        assertThat(outcomes.get(0)).hasSize(12);
        assertThat(outcomes.get(1)).hasSize(12);
        dashboard =
                Dashboard.start(new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()), state.sources());
        base = "http://127.0.0.1:" + dashboard.port();
    }

    @AfterAll
    static void stop() {
        if (dashboard != null) {
            dashboard.close();
        }
        if (state != null) {
            state.close();
        }
    }

    private static String outcome(JsonNode line) {
        List<String> g = new ArrayList<>();
        line.path("gates").forEach(x -> g.add(x.asText()));
        if (line.path("status").asText().equals("errored") || g.contains("errored")) {
            return "errored";
        }
        return g.contains("failed") ? "failed" : "passed";
    }

    private static JsonNode json(String path) throws IOException {
        HttpResponse<String> r = Http.get(base + path);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return MAPPER.readTree(r.body());
    }

    private static String runs() {
        return "run=" + state.settledRun + "&run=" + second;
    }

    private static List<String> rowIds(JsonNode m) {
        List<String> out = new ArrayList<>();
        m.path("rows").forEach(r -> out.add(r.path("case_id").asText()));
        return out;
    }

    @Test
    void cellsViewsAndPagesAgreeWithEachRunsResults() throws IOException {
        JsonNode all = json("/api/matrix?" + runs());
        assertThat(rowIds(all)).containsExactlyElementsOf(outcomes.get(0).keySet());
        for (JsonNode row : all.path("rows")) {
            String id = row.path("case_id").asText();
            assertThat(row.at("/cells/0/outcome").asText())
                    .as(id)
                    .isEqualTo(outcomes.get(0).get(id));
            assertThat(row.at("/cells/1/outcome").asText())
                    .as(id)
                    .isEqualTo(outcomes.get(1).get(id));
        }
        List<String> different = outcomes.get(0).keySet().stream()
                .filter(id -> !outcomes.get(0).get(id).equals(outcomes.get(1).get(id)))
                .toList();
        assertThat(different)
                .as("answering 42 to everything changes some outcomes")
                .isNotEmpty();
        assertThat(rowIds(json("/api/matrix?" + runs() + "&show=different"))).isEqualTo(different);
        List<String> regressions = outcomes.get(0).keySet().stream()
                .filter(id -> outcomes.get(0).get(id).equals("passed")
                        && !outcomes.get(1).get(id).equals("passed"))
                .toList();
        assertThat(regressions).isNotEmpty();
        assertThat(rowIds(json("/api/matrix?" + runs() + "&show=regressions"))).isEqualTo(regressions);
        // Keyset pages of one row lead through the same rows.
        List<String> paged = new ArrayList<>();
        String next = "/api/matrix?" + runs() + "&show=different&limit=1";
        while (next != null) {
            JsonNode p = json(next);
            paged.addAll(rowIds(p));
            next = p.path("next_after").isNull()
                    ? null
                    : "/api/matrix?" + runs() + "&show=different&limit=1&after=" + p.path("next_after");
        }
        assertThat(paged).isEqualTo(different);
        // The page: per gate each run's pass rate, a link to the significance of the second against the first.
        String html = Http.get(base + "/matrix?" + runs() + "&show=regressions").body();
        assertThat(html)
                .contains("id=\"matrix-runs\"")
                .contains("/runs/" + state.settledRun + "/compare/" + second)
                .contains("overall");
        regressions.forEach(id -> assertThat(html).contains(id));
    }

    @Test
    void badMatricesAreOneClearLine() {
        assertThat(Http.get(base + "/matrix?run=" + state.settledRun).statusCode())
                .isEqualTo(400);
        assertThat(Http.get(base + "/api/matrix?" + runs() + "&show=sideways").statusCode())
                .isEqualTo(400);
        assertThat(Http.get(base + "/matrix?run=nonsense&run=" + second).statusCode())
                .isEqualTo(400);
        assertThat(Http.get(base + "/matrix?run=" + state.settledRun + "&run=" + UUID.randomUUID())
                        .statusCode())
                .isEqualTo(404);
        HttpResponse<String> same = Http.get(base + "/api/matrix?run=" + second + "&run=" + second);
        assertThat(same.statusCode()).isEqualTo(400);
        assertThat(same.body()).contains("2 to 8 different runs");
    }
}
