package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.SandboxSupport;
import dev.vigilo.common.crash.RandomKills;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker process killed with SIGKILL while a case's agent runs in a bwrap sandbox (with cgroup limits where the
 * worker may create cgroups). The test waits for the sandboxed agent to signal that it is running (a file in its
 * work directory), records the worker's descendants (bwrap, the shell, the agent), kills the worker, and sees its
 * sandbox directory still there. A second worker then starts on the same sandbox root, removes what the dead one left
 * and completes the run. Afterwards none of the recorded processes is alive, the dead worker's directory, lock and
 * cgroups are gone, the second worker left nothing behind either, and the run verifies.
 */
class SandboxKillIT {
    private static final int CASES = 40;
    private static final long LEASE_MS = 2_000;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aKilledWorkersSandboxIsGoneAfterTheNextStart() throws Exception {
        SandboxSupport.requireBwrap();
        Path task = Files.createDirectories(dir.resolve("task"));
        // Case 7 blocks while the first worker runs it (only that worker's environment has VIGILO_TEST_BLOCK).
        Files.writeString(task.resolve("agent.sh"), """
                n=$(sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
                if [ "$n" -eq 7 ] && [ -n "$VIGILO_TEST_BLOCK" ]; then
                  echo $$ > running.tmp && mv running.tmp running
                  exec sleep 600
                fi
                echo $((n * 2))
                """);
        Path config = dir.resolve("execution.toml");
        Files.writeString(config, "[placements.a]\njdbc_url = \"" + TestPostgres.newDatabaseUrl() + "\"\n");
        ExecutionConfig exec = ExecutionConfig.parse(config);
        Path root = dir.resolve("sandboxes");
        try (ExecFixture fx = new ExecFixture(dir, CASES);
                Placements placements = Placements.open(fx.control, exec)) {
            UUID run = fx.prepare("""
                    name: sandbox-kill
                    agent: {kind: command, command: [sh, agent.sh], timeout_seconds: 900}
                    evaluators:
                      - {name: exact, kind: exact_match}
                    gates:
                      - {name: all, required_evaluators: [exact], min_pass_rate: 1.0}
                    sandbox: {kind: bwrap, workdir: "%s", pids: 64, memory_mb: 256}
                    """.formatted(task));
            fx.placeOn(run, exec);
            new Admission(placements, fx.storage).admit(run);

            Process first = worker(fx, config, root, true);
            List<ProcessHandle> sandboxed;
            Path deadOwner;
            try {
                RandomKills.awaitWhileAlive(
                        first,
                        Duration.ofMinutes(2),
                        "the sandboxed agent of case 7 running",
                        () -> running(root).isPresent());
                // Looked up again until found: a walk that meets another case's attempt directory going away
                // (its case just ended) finds nothing that time, while the blocked agent's marker stays.
                AtomicReference<Path> marker = new AtomicReference<>();
                RandomKills.await(
                        Duration.ofMinutes(1),
                        "the running marker found again",
                        () -> running(root)
                                .map(m -> {
                                    marker.set(m);
                                    return true;
                                })
                                .orElse(false));
                deadOwner = root.relativize(marker.get()).getName(0);
                // The agent writes its marker before it execs sleep, so the process tree is read again until the
                // exec has happened (a read between the two sees sh in sleep's place).
                AtomicReference<List<ProcessHandle>> tree = new AtomicReference<>();
                RandomKills.await(Duration.ofMinutes(1), "bwrap and the sleeping agent under the worker", () -> {
                    tree.set(first.toHandle().descendants().toList());
                    return tree.get().stream()
                            .anyMatch(p -> p.info().command().orElse("").endsWith("sleep"));
                });
                sandboxed = tree.get();
                assertThat(RandomKills.killAfter(first, 0)).isTrue();
                assertThat(first.waitFor()).isEqualTo(RandomKills.KILLED);
            } finally {
                first.destroyForcibly();
            }
            assertThat(root.resolve(deadOwner))
                    .as("the dead worker's sandbox stays until a worker starts")
                    .exists();

            Process second = worker(fx, config, root, false);
            assertThat(second.waitFor(3, TimeUnit.MINUTES)).isTrue();
            assertThat(second.exitValue()).isZero();
            assertThat(fx.runStatus(run)).isEqualTo("settled");

            for (ProcessHandle p : sandboxed) {
                assertThat(p.isAlive())
                        .as("process %s of the killed worker's sandbox", p.pid())
                        .isFalse();
            }
            assertThat(root.resolve(deadOwner)).doesNotExist();
            assertThat(root.resolve(deadOwner + ".lock")).doesNotExist();
            try (Stream<Path> left = Files.list(root)) {
                assertThat(left).as("nothing of either worker is left").isEmpty();
            }
            for (String controller : List.of("pids", "memory")) {
                assertThat(Path.of("/sys/fs/cgroup", controller, "vigilo-sandbox", deadOwner.toString()))
                        .doesNotExist();
            }
            assertThat(Path.of("/sys/fs/cgroup/vigilo-sandbox", deadOwner.toString()))
                    .doesNotExist();
            assertThat(new RunVerifier(placements, fx.storage).verify(run).problem())
                    .isEmpty();
        }
    }

    /** The {@code running} file a blocked agent wrote in its work directory, if one did. */
    private static Optional<Path> running(Path root) {
        if (!Files.isDirectory(root)) {
            return Optional.empty();
        }
        try (Stream<Path> files = Files.walk(root, 4)) {
            return files.filter(f -> f.getFileName().toString().equals("running"))
                    .findFirst();
        } catch (IOException | java.io.UncheckedIOException e) {
            return Optional.empty(); // an attempt directory went while it was listed
        }
    }

    private static Process worker(ExecFixture fx, Path config, Path root, boolean block) throws IOException {
        List<String> cmd = RandomKills.java(List.of("-Xmx256m"));
        cmd.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                ExecMain.class.getName(),
                "worker",
                fx.controlUrl,
                fx.storeRoot.toString(),
                config.toString(),
                "4",
                Long.toString(LEASE_MS),
                root.toString()));
        Path logs = Path.of("target", "crash-logs");
        Files.createDirectories(logs);
        ProcessBuilder b = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(logs.resolve("sandbox-worker-" + System.nanoTime() + ".log")
                        .toFile());
        if (block) {
            b.environment().put("VIGILO_TEST_BLOCK", "1");
        } else {
            b.environment().remove("VIGILO_TEST_BLOCK");
        }
        return b.start();
    }
}
