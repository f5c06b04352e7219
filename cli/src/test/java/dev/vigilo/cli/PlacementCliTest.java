package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several execution databases through the CLI: {@code placement list|drain|activate}, {@code run move-shard} to
 * another database and settlement there, and cancellation of a run whose database went away.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PlacementCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path home;

    private String controlDb;
    private String uploadId;
    private String profile;

    @BeforeAll
    void setUp() throws IOException {
        controlDb = TestPostgres.newDatabaseUrl();
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            cases.append("{\"id\":\"p").append(i).append("\",\"input\":\"q\",\"expected\":\"ok\"}\n");
        }
        Path file = Files.writeString(home.resolve("cases.jsonl"), cases);
        CliRunner.Result up = cli(List.of()).run("dataset", "upload", file.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        uploadId = up.out().trim();
        profile = """
                name: placements
                agent: {kind: command, command: [sh, -c, "cat >/dev/null; echo ok"], max_attempts: 1}
                evaluators: [{name: exact, kind: exact_match}]
                gates: [{name: all, required_evaluators: [exact], min_pass_rate: 1.0}]
                """;
    }

    private CliRunner cli(List<String> more) {
        List<String> args = new java.util.ArrayList<>(List.of("--control-db", controlDb));
        args.addAll(more);
        return new CliRunner(home, Map.of(), args);
    }

    private static Path config(String name, String text) throws IOException {
        return Files.writeString(home.resolve(name), text);
    }

    private String create(CliRunner cli) {
        String runId = UUID.randomUUID().toString();
        CliRunner.Result r =
                cli.run("run", "create", "--profile", profile, "--dataset-upload-id", uploadId, "--run-id", runId);
        assertThat(r.exitCode()).as(r.err()).isZero();
        return runId;
    }

    private static String oneLine(CliRunner.Result r, int exitCode) {
        assertThat(r.exitCode()).as(r.err()).isEqualTo(exitCode);
        assertThat(r.err()).as(r.err()).startsWith("vigilo: error: ").hasLineCount(1);
        return r.err().strip();
    }

    @Test
    void aShardMovesToAnotherDatabaseWhileItsSourceDrainsAndTheRunSettles() throws IOException {
        // Aliases in order: "b" first, so the run's only shard (0) is placed on b.
        Path config = config("two.toml", """
                [placements.control]

                [placements.b]
                jdbc_url = "%s"
                """.formatted(TestPostgres.newDatabaseUrl(1)));
        CliRunner cli = cli(List.of("--execution-config", config.toString()));
        String run = create(cli);
        JsonNode before = JSON.readTree(cli.run("run", "status", run, "--json").out());
        assertThat(before.at("/execution/shards/0/placement").asText()).isEqualTo("b");

        JsonNode listed = JSON.readTree(cli.run("placement", "list", "--json").out());
        assertThat(listed).hasSize(2);
        assertThat(listed.get(0).get("alias").asText()).isEqualTo("b");
        assertThat(listed.get(0).get("state").asText()).isEqualTo("active");
        assertThat(listed.get(0).get("reachable").asBoolean()).isTrue();
        assertThat(listed.get(1).get("alias").asText()).isEqualTo("control");

        CliRunner.Result drain = cli.run("placement", "drain", "b");
        assertThat(drain.exitCode()).as(drain.err()).isZero();
        assertThat(cli.run("placement", "list").out()).containsPattern("b\\s+draining\\s+reaches it");
        // Without the configuration this process reaches control only, and says so.
        assertThat(cli(List.of()).run("placement", "list").out())
                .containsPattern("b\\s+draining\\s+not in built-in default");

        assertThat(oneLine(cli.run("run", "move-shard", run, "0", "nowhere"), ExitCode.INVALID_INPUT))
                .contains("\"nowhere\"");
        assertThat(oneLine(cli.run("run", "move-shard", run, "200", "control"), ExitCode.INVALID_INPUT))
                .contains("out of range");
        CliRunner.Result move = cli.run("run", "move-shard", run, "0", "control");
        assertThat(move.exitCode()).as(move.err()).isZero();
        assertThat(move.out()).contains("moved from execution database \"b\" to \"control\"");
        CliRunner.Result again = cli.run("run", "move-shard", run, "0", "control");
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out()).contains("already in execution database \"control\"");
        JsonNode after = JSON.readTree(cli.run("run", "status", run, "--json").out());
        assertThat(after.at("/execution/shards/0/placement").asText()).isEqualTo("control");
        assertThat(after.at("/execution/shards/0/state").asText()).isEqualTo("active");

        CliRunner.Result activate = cli.run("placement", "activate", "b");
        assertThat(activate.exitCode()).as(activate.err()).isZero();
        assertThat(cli.run("placement", "list").out()).containsPattern("b\\s+active\\s+reaches it");
        assertThat(oneLine(cli.run("placement", "drain", "zz"), ExitCode.INVALID_INPUT))
                .contains("\"zz\"", "registered: b, control");
        assertThat(oneLine(cli.run("placement", "drain", "B;\u0000"), ExitCode.INVALID_INPUT))
                .contains("not an execution database alias");

        CliRunner.Result worker = cli.run("worker", "--exit-when-idle");
        assertThat(worker.exitCode()).as(worker.err()).isZero();
        assertThat(worker.err()).contains("run " + run + " settled: verdict passed");
        assertThat(cli.run("run", "results", run).out().lines()).hasSize(8);
    }

    @Test
    void aRunWhoseDatabaseWentAwayIsStillCancelledAndTheCommandSaysWhereItCouldNotClose() throws IOException {
        String run;
        Path config;
        try (TestPostgres.PrivateServer server = TestPostgres.startPrivateServer()) {
            // "a-private" sorts before "control": the run's only shard lives on the private server.
            config = config("private.toml", """
                    [placements.control]

                    [placements.a-private]
                    jdbc_url = "%s"
                    """.formatted(server.newDatabaseUrl()));
            run = create(cli(List.of("--execution-config", config.toString())));
        }
        CliRunner cli = cli(List.of("--execution-config", config.toString()));
        assertThat(oneLine(cli.run("run", "status", run), ExitCode.UNAVAILABLE)).contains("\"a-private\"");

        CliRunner.Result cancel = cli.run("run", "cancel", run);
        assertThat(cancel.out()).contains("run " + run + " cancelled");
        assertThat(oneLine(cancel, ExitCode.UNAVAILABLE))
                .contains("is cancelled, but its shards could not be closed in", "\"a-private\"", "repeat");
        // The cancellation itself is durable: a repeat finds it cancelled (and still cannot close the shards there).
        CliRunner.Result again = cli.run("run", "cancel", run);
        assertThat(again.out()).contains("already cancelled");
        assertThat(again.exitCode()).isEqualTo(ExitCode.UNAVAILABLE);
    }
}
