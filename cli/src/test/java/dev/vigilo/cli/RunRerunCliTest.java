package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo run rerun-errors} in-process: a command agent that fails on every fourth case while a marker file
 * exists leaves those cases errored; {@code --dry-run} lists them by type (text and JSON) and changes nothing; the
 * rerun reopens the run, a real worker executes them again (the marker gone) and the run settles with none errored;
 * verify passes; then "nothing to rerun" (exit 0). Unknown (exit 3), not ended and cancelled runs (exit 4) are
 * refused in one line.
 */
class RunRerunCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int CASES = 16;
    private static final Pattern RUN_ID = Pattern.compile("run ([0-9a-f-]{36}) ");

    @TempDir
    Path home;

    private CliRunner cli;
    private String controlDb;

    private String create(Path profile, String... more) {
        List<String> args = new java.util.ArrayList<>(
                List.of("run", "create", "--profile-file", profile.toString(), "--dataset-upload-id", upload()));
        args.addAll(List.of(more));
        CliRunner.Result r = cli.run(args.toArray(String[]::new));
        assertThat(r.exitCode()).as(r.err()).isZero();
        Matcher m = RUN_ID.matcher(r.out());
        assertThat(m.find()).as(r.out()).isTrue();
        return m.group(1);
    }

    private String uploadId;

    private String upload() {
        if (uploadId == null) {
            try {
                StringBuilder cases = new StringBuilder();
                for (int i = 0; i < CASES; i++) {
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
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return uploadId;
    }

    private void work() {
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
            new Worker(placements, StorageConfig.localDefault(objects), options, Worker.Listener.NONE).run();
        }
    }

    private String status(String run) throws Exception {
        return JSON.readTree(cli.run("run", "status", run, "--json").out())
                .path("status")
                .asText();
    }

    @Test
    void dryRunThenRerunThenNothingLeft() throws Exception {
        controlDb = TestPostgres.newDatabaseUrl();
        cli = new CliRunner(home, Map.of(), List.of("--control-db", controlDb));
        Path marker = home.resolve("broken");
        Files.writeString(marker, "");
        Path agent = home.resolve("agent.sh");
        Files.writeString(agent, """
                #!/bin/sh
                n=$(sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
                if [ -e "%s" ] && [ $((n %% 4)) -eq 0 ]; then echo "broken for $n" >&2; exit 3; fi
                echo $((n * 2))
                """.formatted(marker));
        Files.setPosixFilePermissions(agent, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path profile = home.resolve("profile.yaml");
        Files.writeString(profile, """
                name: rerun-cli
                agent: {kind: command, command: ["%s"], max_attempts: 1}
                evaluators: [{name: exact, kind: exact_match}]
                gates: [{name: all, required_evaluators: [exact], min_pass_rate: 0.9}]
                """.formatted(agent));
        String run = create(profile);
        work();
        assertThat(status(run)).isEqualTo("settled");

        CliRunner.Result dry = cli.run("run", "rerun-errors", run, "--dry-run");
        assertThat(dry.exitCode()).as(dry.err()).isZero();
        assertThat(dry.out())
                .contains("run " + run + ": 4 errored cases in 1 chunks would run again (settlement generation 2);"
                        + " nothing changed")
                .contains("  nonzero_exit: 4: case-0, case-4, case-8, case-12");
        CliRunner.Result dryJson = cli.run("run", "rerun-errors", run, "--dry-run", "--json");
        JsonNode d = JSON.readTree(dryJson.out());
        assertThat(d.path("outcome").asText()).isEqualTo("would_rerun");
        assertThat(d.path("cases").asInt()).isEqualTo(4);
        assertThat(d.path("by_type").path("nonzero_exit").get(1).path("id").asText())
                .isEqualTo("case-4");
        assertThat(status(run)).as("a dry run changes nothing").isEqualTo("settled");

        Files.delete(marker);
        CliRunner.Result rerun = cli.run("run", "rerun-errors", run, "--json");
        assertThat(rerun.exitCode()).as(rerun.err()).isZero();
        assertThat(JSON.readTree(rerun.out()).path("outcome").asText()).isEqualTo("reopened");
        assertThat(status(run)).isEqualTo("pending");
        work();
        JsonNode settled = JSON.readTree(cli.run("run", "status", run, "--json").out());
        assertThat(settled.path("status").asText()).isEqualTo("settled");
        assertThat(settled.path("verdict").asText()).isEqualTo("passed");
        assertThat(settled.path("gates").get(0).path("errored").asInt()).isZero();
        assertThat(settled.path("gates").get(0).path("passed").asInt()).isEqualTo(CASES);
        assertThat(settled.path("reruns").get(0).path("generation").asInt()).isEqualTo(1);
        assertThat(settled.path("reruns").get(0).path("verdict").asText()).isEqualTo("failed");
        assertThat(settled.path("reruns")
                        .get(0)
                        .path("rerun_by_type")
                        .path("nonzero_exit")
                        .asInt())
                .isEqualTo(4);
        assertThat(cli.run("run", "status", run).out())
                .contains("earlier settlement 1: settled, verdict failed; 4 errored cases run again (nonzero_exit 4)");
        CliRunner.Result verify = cli.run("verify", run);
        assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();

        CliRunner.Result nothing = cli.run("run", "rerun-errors", run);
        assertThat(nothing.exitCode()).as(nothing.err()).isZero();
        assertThat(nothing.out()).isEqualTo("run " + run + " (settled) has no errored case: nothing to rerun\n");

        CliRunner.Result unknown =
                cli.run("run", "rerun-errors", UUID.randomUUID().toString());
        assertThat(unknown.exitCode()).isEqualTo(3);
        assertThat(unknown.err().lines().count()).isEqualTo(1);
        assertThat(unknown.err()).contains("does not exist");

        String held = create(profile, "--prepare-only");
        CliRunner.Result creating = cli.run("run", "rerun-errors", held, "--dry-run");
        assertThat(creating.exitCode()).isEqualTo(4);
        assertThat(creating.err()).contains("is creating; only a settled or failed run can rerun its errors");
        assertThat(cli.run("run", "cancel", held).exitCode()).isZero();
        CliRunner.Result cancelled = cli.run("run", "rerun-errors", held);
        assertThat(cancelled.exitCode()).isEqualTo(4);
        assertThat(cancelled.err()).contains("was cancelled");
        assertThat(status(held)).isEqualTo("cancelled");
    }
}
