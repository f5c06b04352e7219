package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM (what Ctrl-C also triggers) stops a real {@code vigilo eval} process while its in-process worker executes:
 * it exits 130 saying how to continue, the chunk it held is queued again with no owner, and a later {@code vigilo
 * worker} finishes the run.
 */
class EvalSignalIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    @Test
    void sigtermGivesTheHeldChunkBackAndAWorkerFinishesTheRun() throws Exception {
        String db = TestPostgres.newDatabaseUrl();
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", db));
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < 4; i++) {
            cases.append("{\"id\":\"s").append(i).append("\",\"input\":\"q\",\"expected\":\"ok\"}\n");
        }
        Path file = Files.writeString(home.resolve("cases.jsonl"), cases);
        // The agent hangs while the process's environment says so (only the eval's does).
        Path agent = Files.writeString(
                home.resolve("agent.sh"),
                "cat >/dev/null\nif [ -n \"$VIGILO_TEST_SLOW\" ]; then sleep 600; fi\necho ok\n");
        Path profile = Files.writeString(home.resolve("profile.yaml"), """
                name: eval-signal
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1}
                evaluators: [{name: exact, kind: exact_match}]
                gates: [{name: all, required_evaluators: [exact], min_pass_rate: 1.0}]
                """.formatted(agent));
        String runId = UUID.randomUUID().toString();
        Path err = home.resolve("eval.err");
        Process eval = VigiloProcess.builder(
                        home,
                        Map.of("VIGILO_TEST_SLOW", "1"),
                        List.of(),
                        "--control-db",
                        db,
                        "eval",
                        "--profile-file",
                        profile.toString(),
                        "--dataset",
                        file.toString(),
                        "--run-id",
                        runId)
                .redirectOutput(home.resolve("eval.out").toFile())
                .redirectError(err.toFile())
                .start();
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(db))) {
            Jdbi jdbi = control.jdbi();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            Optional<String> state = Optional.empty();
            while (!state.equals(Optional.of("leased")) && System.nanoTime() < deadline && eval.isAlive()) {
                try {
                    state = chunk(jdbi, runId, "state");
                } catch (org.jdbi.v3.core.JdbiException e) {
                    state = Optional.empty(); // eval has not created the execution schema yet
                }
                if (!state.equals(Optional.of("leased"))) {
                    Thread.sleep(100);
                }
            }
            assertThat(state).as(Files.readString(err)).contains("leased");

            eval.destroy(); // SIGTERM
            assertThat(eval.waitFor(45, TimeUnit.SECONDS)).isTrue();
            String stderr = Files.readString(err, StandardCharsets.UTF_8);
            assertThat(eval.exitValue()).as(stderr).isEqualTo(ExitCode.INTERRUPTED);
            assertThat(stderr).contains("the held chunks were given back").contains("continues run " + runId);
            assertThat(chunk(jdbi, runId, "state")).contains("queued");
            assertThat(chunk(jdbi, runId, "lease_owner::text")).isEmpty();
        } finally {
            eval.destroyForcibly();
        }

        VigiloProcess.Result worker =
                VigiloProcess.run(home, Map.of(), List.of(), 120, "--control-db", db, "worker", "--exit-when-idle");
        assertThat(worker.exitCode()).as(worker.err()).isZero();
        JsonNode status =
                JSON.readTree(cli.run("run", "status", runId, "--json").out());
        assertThat(status.get("status").asText()).isEqualTo("settled");
        assertThat(status.get("verdict").asText()).isEqualTo("passed");
    }

    /** A column of the run's one chunk row, empty when null. */
    private static Optional<String> chunk(Jdbi jdbi, String runId, String column) {
        return jdbi.withHandle(
                h -> h.createQuery("SELECT " + column + " FROM vigilo_exec.exec_chunks WHERE run_id = :r::uuid")
                        .bind("r", runId)
                        .mapTo(String.class)
                        .findOne());
    }
}
