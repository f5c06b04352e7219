package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.SecretLeaks;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo run transcript} (text and {@code --json}) and {@code run results} show the mask where an endpoint, an
 * agent or an evaluator gave a run's API key back ({@link SecretLeaks}), over runs a real worker executed with the
 * key in its environment.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SecretMaskingCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern RUN_ID = Pattern.compile("run ([0-9a-f-]{36}) pending");

    @TempDir
    static Path home;

    private CliRunner cli;
    private String controlDb;
    private String uploadId;
    private OpenAiTestServer endpoint;
    private String key;
    private String httpRun;
    private String commandRun;

    @BeforeAll
    void setUp() throws Exception {
        controlDb = TestPostgres.newDatabaseUrl();
        cli = new CliRunner(home, Map.of(), List.of("--control-db", controlDb));
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
        CliRunner.Result up = cli.run("dataset", "upload", file.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        uploadId = up.out().trim();
        endpoint = OpenAiTestServer.start();
        SecretLeaks.echoingEndpoint(endpoint);
        key = SecretLeaks.newKey();
        Path[] scripts = SecretLeaks.scripts(home);
        httpRun = create(SecretLeaks.httpProfile(endpoint, scripts[1]));
        commandRun = create(SecretLeaks.commandProfile(scripts[0], scripts[1]));
        Path objects = new Environment(Map.of(Environment.HOME_VARIABLE, home.toString()), home).defaultObjectStore();
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(controlDb));
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            Worker.Options options = new Worker.Options(
                    2,
                    true,
                    Duration.ofSeconds(20),
                    Duration.ofSeconds(2),
                    Duration.ofMillis(100),
                    Duration.ofMillis(200),
                    Duration.ofSeconds(5));
            SecretLeaks.worker(placements, StorageConfig.localDefault(objects), options, key)
                    .run();
        }
    }

    @AfterAll
    void tearDown() {
        if (endpoint != null) {
            endpoint.close();
        }
    }

    private String create(String profile) {
        CliRunner.Result r = cli.run("run", "create", "--profile", profile, "--dataset-upload-id", uploadId);
        assertThat(r.exitCode()).as(r.err()).isZero();
        Matcher m = RUN_ID.matcher(r.out());
        assertThat(m.find()).as(r.out()).isTrue();
        return m.group(1);
    }

    /** A successful command's stdout, which holds no 12 characters of the key. */
    private String run(String... args) {
        CliRunner.Result r = cli.run(args);
        assertThat(r.exitCode()).as(r.err()).isZero();
        for (int i = 0; i + 12 <= key.length(); i++) {
            assertThat(r.out()).as(String.join(" ", args)).doesNotContain(key.substring(i, i + 12));
            assertThat(r.err()).as(String.join(" ", args)).doesNotContain(key.substring(i, i + 12));
        }
        return r.out();
    }

    @Test
    void transcriptsAndResultsShowTheMaskWhereTheKeyWasGivenBack() throws Exception {
        assertThat(run("run", "transcript", httpRun, "case-0", "--attempt", "1"))
                .contains("bad key Bearer ***");
        String json = run("run", "transcript", httpRun, "case-1", "--attempt", "1", "--json");
        assertThat(json).contains("upstream failed for Authorization: Bearer ***");
        for (String line : json.split("\n")) {
            JSON.readTree(line);
        }
        assertThat(run("run", "transcript", httpRun, "case-1")).contains("your key is ***", "evaluator saw ***");
        assertThat(run("run", "transcript", commandRun, "case-0"))
                .contains("I will call the API with ***", "tool result [c1]: accepted ***", "output: answer ***");
        assertThat(run("run", "transcript", commandRun, "case-0", "--json")).contains("\"***\":\"as a field name\"");
        String results = run("run", "results", httpRun);
        assertThat(results).contains("bad key Bearer ***", "your key is ***");
        JsonNode first = JSON.readTree(results.lines().findFirst().orElseThrow());
        assertThat(first.path("case_id").asText()).isEqualTo("case-0");
        assertThat(run("run", "results", commandRun)).contains("answer ***", "stderr ends: *** end");
    }
}
