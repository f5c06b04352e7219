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
 * SIGTERM (what Ctrl-C also triggers: the JVM's shutdown path) stops a real {@code vigilo worker} process gracefully:
 * it exits promptly with 130, its running agents are killed with everything they started (a daemon that left the
 * session included), the chunk it held is queued again with no owner (not
 * left leased until its lease expires), and a second worker finishes the run.
 */
class WorkerSignalIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    @Test
    void sigtermGivesTheHeldChunkBackAndASecondWorkerFinishesTheRun() throws Exception {
        String db = TestPostgres.newDatabaseUrl();
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", db));
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            cases.append("{\"id\":\"s").append(i).append("\",\"input\":\"q\",\"expected\":\"ok\"}\n");
        }
        Path file = Files.writeString(home.resolve("cases.jsonl"), cases);
        CliRunner.Result up = cli.run("dataset", "upload", file.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        // The agent hangs while the worker's environment says so (only the first worker's does), after starting a
        // daemon: a process in a new session (setsid) whose parent, a subshell, exits at once, so it is neither in
        // the agent's process group nor its descendant. It writes its pid to daemons/.
        Path daemons = Files.createDirectories(home.resolve("daemons"));
        Path agent = Files.writeString(
                home.resolve("agent.sh"),
                "cat >/dev/null\nif [ -n \"$VIGILO_TEST_SLOW\" ]; then\n"
                        + "  (setsid sh -c 'echo $$ > \"" + daemons + "/$$.tmp\"; mv \"" + daemons + "/$$.tmp\" \""
                        + daemons + "/$$.pid\"; exec sleep 600' </dev/null >/dev/null 2>&1 &)\n"
                        + "  sleep 600\nfi\necho ok\n");
        String profile = """
                name: signal
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1}
                evaluators: [{name: exact, kind: exact_match}]
                gates: [{name: all, required_evaluators: [exact], min_pass_rate: 1.0}]
                """.formatted(agent);
        String runId = UUID.randomUUID().toString();
        CliRunner.Result created = cli.run(
                "run",
                "create",
                "--profile",
                profile,
                "--dataset-upload-id",
                up.out().trim(),
                "--run-id",
                runId);
        assertThat(created.exitCode()).as(created.err()).isZero();

        Path out = home.resolve("worker.out");
        Path err = home.resolve("worker.err");
        Process worker = VigiloProcess.builder(
                        home,
                        Map.of("VIGILO_TEST_SLOW", "1"),
                        List.of(),
                        "--control-db",
                        db,
                        "worker",
                        "--concurrency",
                        "2",
                        "--json")
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(db))) {
            Jdbi jdbi = control.jdbi();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            Optional<String> owner = Optional.empty();
            while (owner.isEmpty() && System.nanoTime() < deadline && worker.isAlive()) {
                owner = chunk(jdbi, runId, "lease_owner::text");
                if (owner.isEmpty()) {
                    Thread.sleep(100);
                }
            }
            assertThat(owner).as(Files.readString(err)).isPresent();
            assertThat(chunk(jdbi, runId, "state")).contains("leased");
            while (daemonPids(daemons).isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(daemonPids(daemons)).as("an agent started its daemon").isNotEmpty();

            long signalled = System.nanoTime();
            worker.destroy(); // SIGTERM
            assertThat(worker.waitFor(45, TimeUnit.SECONDS)).isTrue();
            long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - signalled);
            String stderr = Files.readString(err, StandardCharsets.UTF_8);
            assertThat(worker.exitValue()).as(stderr).isEqualTo(ExitCode.INTERRUPTED);
            assertThat(seconds).as("seconds to stop").isLessThan(30);
            JsonNode summary = JSON.readTree(Files.readString(out, StandardCharsets.UTF_8));
            assertThat(summary.get("stopped").asText()).isEqualTo("signal");
            assertThat(summary.get("chunks_requeued").asLong()).isEqualTo(1);
            assertThat(summary.get("cases_executed").asLong()).isZero();
            // The stop reaped every process the interrupted attempts started, the daemons included.
            assertAllEnded(daemonPids(daemons));

            // Given back at once: queued, no owner, no expiry to wait for, no receipt.
            assertThat(chunk(jdbi, runId, "state")).contains("queued");
            assertThat(chunk(jdbi, runId, "lease_owner::text")).isEmpty();
            assertThat(chunk(jdbi, runId, "receipt_key")).isEmpty();
            assertThat(JSON.readTree(cli.run("run", "status", runId, "--json").out())
                            .at("/execution/chunks_done")
                            .asLong())
                    .isZero();
        } finally {
            worker.destroyForcibly();
        }

        VigiloProcess.Result second =
                VigiloProcess.run(home, Map.of(), List.of(), 120, "--control-db", db, "worker", "--exit-when-idle");
        assertThat(second.exitCode()).as(second.err()).isZero();
        assertThat(second.err()).contains("run " + runId + " settled: verdict passed");
        JsonNode status =
                JSON.readTree(cli.run("run", "status", runId, "--json").out());
        assertThat(status.get("status").asText()).isEqualTo("settled");
        assertThat(status.at("/gates/0/passed").asLong()).isEqualTo(6);
    }

    private static List<Long> daemonPids(Path daemons) throws java.io.IOException {
        try (var files = Files.list(daemons)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".pid"))
                    .map(f -> {
                        try {
                            return Long.parseLong(Files.readString(f).strip());
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    })
                    .toList();
        }
    }

    /**
     * Waits (at most 10 s) until every pid is gone or a zombie (dead, not yet collected by whoever adopted it); kills
     * the survivors, so a failure leaves nothing behind, and names them.
     */
    private static void assertAllEnded(List<Long> pids) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!pids.stream().allMatch(WorkerSignalIT::ended) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        List<Long> survivors = pids.stream().filter(pid -> !ended(pid)).toList();
        survivors.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        assertThat(survivors)
                .as("daemons still running after the worker stopped")
                .isEmpty();
    }

    private static boolean ended(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) == 'Z';
        } catch (java.io.IOException e) {
            return true;
        }
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
