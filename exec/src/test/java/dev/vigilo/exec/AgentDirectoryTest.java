package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.worker.Worker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker given an agent directory runs a profile's relative command paths from there (as {@code vigilo quickstart}
 * does with the example agent), and settles promptly after its last chunk.
 */
class AgentDirectoryTest {
    /** Answers with the case's expected value: a script the profile names by a relative path. */
    private static final String PROFILE = """
            name: agent-directory
            agent: {kind: command, command: [sh, agents/answer.sh], max_attempts: 1}
            evaluators:
              - {name: exact, kind: exact_match}
            gates:
              - {name: all, required_evaluators: [exact], min_pass_rate: 1.0}
            """;

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 6);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        placements.close();
        fx.close();
    }

    private Worker.Options options() {
        return new Worker.Options(
                2,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                // A long coordination interval: settlement must follow the last chunk, not wait for the next round.
                Duration.ofSeconds(60),
                Duration.ofSeconds(5));
    }

    @Test
    void relativeCommandPathsResolveFromTheAgentDirectory() throws IOException {
        Path agentDir = Files.createDirectories(dir.resolve("work/agents")).getParent();
        Files.writeString(agentDir.resolve("agents/answer.sh"), "sed -n 's/.*\"expected\":\"\\([0-9]*\\)\".*/\\1/p'\n");
        UUID run = fx.prepare(PROFILE);
        new Admission(placements, fx.storage).admit(run);
        long started = System.nanoTime();
        Worker.Report report = new Worker(placements, fx.storage, options(), Worker.Listener.NONE, agentDir).run();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(45));
        assertThat(report.casesExecuted()).isEqualTo(6);
        assertThat(report.settlements()).isEqualTo(1);
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        Map<String, Object> gate = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery(
                                "SELECT passed, errored, passed_gate FROM run_gate_results WHERE run_id = :r")
                        .bind("r", run)
                        .mapToMap()
                        .one());
        assertThat(gate)
                .containsEntry("passed", 6L)
                .containsEntry("errored", 0L)
                .containsEntry("passed_gate", true);
    }

    @Test
    void withoutItTheSameCommandRunsFromTheProcessDirectoryAndErrs() {
        UUID run = fx.prepare(PROFILE);
        new Admission(placements, fx.storage).admit(run);
        Worker.Report report = new Worker(placements, fx.storage, options(), Worker.Listener.NONE).run();
        assertThat(report.casesExecuted()).isEqualTo(6);
        long errored = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT errored FROM run_gate_results WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(Long.class)
                        .one());
        assertThat(errored).isEqualTo(6);
    }
}
