package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A command step whose command daemonizes a process (a subshell that starts it in a new session with setsid and
 * exits): the process ends with the step's attempt, and one that keeps the step's stdout open cannot hold the step.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CommandStepReapingTest {
    @TempDir
    Path dir;

    private final List<Long> pids = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    }

    @Test
    void aDaemonizedProcessEndsWithTheStep() throws Exception {
        Path pid = dir.resolve("daemon.pid");
        StepSpec step = commandStep(daemonize(pid, "</dev/null >/dev/null 2>&1") + "echo '{\"a\": 1}'", 30);
        ObjectNode updates = new StepExecutor()
                .run(step, "i1", Json.MAPPER.createObjectNode(), 1)
                .updates();
        assertThat(updates.get("a").asInt()).isEqualTo(1);
        assertEnded(pid(pid));
    }

    @Test
    void aDaemonizedProcessHoldingStdoutCannotHoldTheStep() throws Exception {
        Path pid = dir.resolve("daemon.pid");
        // The daemon inherits the step's stdout and never closes it.
        StepSpec step = commandStep(daemonize(pid, "</dev/null 2>/dev/null") + "echo '{\"a\": 2}'", 30);
        ObjectNode updates = new StepExecutor()
                .run(step, "i1", Json.MAPPER.createObjectNode(), 1)
                .updates();
        assertThat(updates.get("a").asInt()).isEqualTo(2);
        assertEnded(pid(pid));
    }

    @Test
    void aDaemonizedProcessEndsWithAStepThatTimedOut() throws Exception {
        Path pid = dir.resolve("daemon.pid");
        StepSpec step = commandStep(daemonize(pid, "</dev/null >/dev/null 2>&1") + "exec sleep 60", 1);
        assertThatThrownBy(() -> new StepExecutor().run(step, "i1", Json.MAPPER.createObjectNode(), 1))
                .isInstanceOf(StepFailure.class)
                .hasMessageContaining("did not finish within 1 s");
        assertEnded(pid(pid));
    }

    private static String daemonize(Path pidFile, String redirects) {
        return "cat > /dev/null\n(setsid sh -c 'echo $$ > \"" + pidFile + ".tmp\"; mv \"" + pidFile + ".tmp\" \""
                + pidFile + "\"; exec sleep 1000' " + redirects + " &)\n"
                + "while [ ! -s '" + pidFile + "' ]; do sleep 0.02; done\n";
    }

    private StepSpec commandStep(String script, int timeoutSeconds) {
        String yaml = "name: reap\ninput: seeds.jsonl\nsteps:\n  - name: run\n    kind: command\n"
                + "    timeout_seconds: " + timeoutSeconds + "\n    command: "
                + Json.canonical(
                        Json.MAPPER.createArrayNode().add("sh").add("-c").add(script)) + "\n";
        return PipelineParser.parse("reap.yaml", yaml, dir).steps().get(0);
    }

    private long pid(Path file) throws Exception {
        long pid = Long.parseLong(Files.readString(file).strip());
        pids.add(pid);
        return pid;
    }

    /** Waits (at most 10 s) until {@code pid} is gone or a zombie (dead, not yet collected by whoever adopted it). */
    private static void assertEnded(long pid) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!ended(pid) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(ended(pid)).as("process %d has ended", pid).isTrue();
    }

    private static boolean ended(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) == 'Z';
        } catch (java.io.IOException e) {
            return true;
        }
    }
}
