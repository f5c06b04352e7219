package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.AgentEnvironment;
import dev.vigilo.agent.SandboxSupport;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.ReceiptParser;
import dev.vigilo.exec.view.RunResults;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run with a bwrap {@code sandbox} in a real worker: the agent and a command evaluator run in each case's fresh copy
 * of the workdir (the evaluator sees the agent's file), a write outside it fails, the {@code keep_files} are stored
 * as content-addressed objects referenced from version 5 receipts, {@code vigilo verify} reads them back (and finds
 * an altered one), and no sandbox directory is left once the worker stops.
 */
class SandboxRunTest {
    private static final int CASES = 12;

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;

    @BeforeEach
    void setUp() throws IOException {
        SandboxSupport.requireBwrap();
        fx = new ExecFixture(dir, CASES);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        if (placements != null) {
            placements.close();
            fx.close();
        }
    }

    @Test
    void casesRunInFreshSandboxesAndTheirKeptFilesAreStoredAndVerified() throws IOException {
        Path task = Files.createDirectories(dir.resolve("task"));
        Path escaped = dir.resolve("escaped");
        Files.writeString(task.resolve("agent.sh"), """
                n=$(sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
                test -e answer.patch && echo "not a fresh copy" >&2 && exit 3
                echo "escaped" > '%s' 2>/dev/null
                echo $((n * 2)) > answer.patch
                echo $((n * 2))
                """.formatted(escaped));
        Files.writeString(task.resolve("check.sh"), "test -f answer.patch && echo 1 || echo 0\n");
        UUID run = fx.prepare("""
                name: sandboxed
                agent: {kind: command, command: [sh, agent.sh], timeout_seconds: 120}
                evaluators:
                  - {name: exact, kind: exact_match}
                  - {name: patched, kind: command, command: [sh, check.sh]}
                gates:
                  - {name: all, required_evaluators: [exact, patched], min_pass_rate: 1}
                sandbox:
                  kind: bwrap
                  workdir: "%s"
                  pids: 64
                  memory_mb: 256
                  keep_files: ["*.patch"]
                """.formatted(task));
        new Admission(placements, fx.storage).admit(run);
        Path root = dir.resolve("sandboxes");
        new Worker(
                        placements,
                        fx.storage,
                        TranscriptTest.fast(4),
                        Worker.Listener.NONE,
                        AgentEnvironment.system().withWorkingDirectory(dir),
                        root)
                .run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        assertThat(escaped).doesNotExist();
        assertThat(task.resolve("answer.patch"))
                .as("the workdir itself is never written")
                .doesNotExist();
        try (var left = Files.list(root)) {
            assertThat(left).as("the worker removed its directory and lock").isEmpty();
        }

        List<Receipt> receipts = TranscriptTest.receipts(fx, placements, run);
        Receipt.KeptFileRef some = null;
        for (Receipt r : receipts) {
            assertThat(new String(ReceiptParser.toJson(r), StandardCharsets.UTF_8))
                    // version 8: version 5's kept files, with transcripts that are slices of containers
                    .contains("\"version\":8,")
                    .contains("\"kept_files\":[{");
            for (Receipt.CaseResult c : r.cases()) {
                assertThat(c.errored())
                        .as("case %d: %s", c.ordinal(), c.error())
                        .isFalse();
                assertThat(c.gates()).containsEntry("all", Receipt.GateOutcome.PASSED);
                assertThat(c.keptFiles()).singleElement().satisfies(k -> {
                    assertThat(k.path()).isEqualTo("answer.patch");
                    byte[] expected = ((c.ordinal() * 2) + "\n").getBytes(StandardCharsets.UTF_8);
                    assertThat(k.ref().sha256()).isEqualTo(Sha256.of(expected));
                    assertThat(k.ref().key()).isEqualTo(Receipt.keptFileKey(run, Sha256.of(expected)));
                    assertThat(fx.storeRoot.resolve(k.ref().key().value())).hasBinaryContent(expected);
                });
                some = c.keptFiles().get(0);
            }
        }
        assertThat(new RunVerifier(placements, fx.storage).verify(run).problem())
                .isEmpty();

        java.io.ByteArrayOutputStream lines = new java.io.ByteArrayOutputStream();
        new RunResults(placements, fx.storage).write(run, lines);
        assertThat(lines.toString(StandardCharsets.UTF_8))
                .contains("\"kept_files\":[{\"path\":\"answer.patch\",\"key\":\"runs/" + run + "/files/");

        Files.writeString(fx.storeRoot.resolve(some.ref().key().value()), "tampered\n");
        assertThat(new RunVerifier(placements, fx.storage).verify(run).problem())
                .hasValueSatisfying(p -> assertThat(p.toString()).contains("kept file answer.patch"));
    }

    @Test
    void aWorkerWithoutBwrapFailsTheChunkWithOneMessageNotEveryCase() throws IOException {
        Path task = Files.createDirectories(dir.resolve("task"));
        UUID run = fx.prepare("""
                name: no-bwrap
                agent: {kind: command, command: [sh, -c, "echo 0"], timeout_seconds: 60}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 1}
                sandbox: {kind: bwrap, workdir: "%s"}
                """.formatted(task));
        new Admission(placements, fx.storage).admit(run);
        Worker.Options fast = TranscriptTest.fast(2);
        Worker.Options quickRetries = new Worker.Options(
                fast.concurrency(),
                true,
                fast.lease(),
                fast.heartbeat(),
                fast.poll(),
                fast.coordination(),
                fast.creationLease(),
                dev.vigilo.common.retry.RetryPolicy.of(
                        dev.vigilo.exec.record.ChunkTables.MAX_ATTEMPTS,
                        java.time.Duration.ofMillis(10),
                        java.time.Duration.ofMillis(20)),
                fast.outageWait());
        java.util.Map<String, String> noPrograms = new java.util.HashMap<>(System.getenv());
        noPrograms.put("PATH", "/nonexistent");
        new Worker(
                        placements,
                        fx.storage,
                        quickRetries,
                        Worker.Listener.NONE,
                        AgentEnvironment.system().withVariables(noPrograms).withWorkingDirectory(dir),
                        dir.resolve("sandboxes"))
                .run();
        assertThat(TranscriptTest.receipts(fx, placements, run))
                .as("no case ran")
                .isEmpty();
        List<String> errors = placements
                .jdbi(ExecutionConfig.CONTROL)
                .withHandle(h -> h.createQuery("SELECT state || ': ' || coalesce(last_error, '') FROM exec_chunks"
                                + " WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(String.class)
                        .list());
        assertThat(errors)
                .isNotEmpty()
                .allSatisfy(e -> assertThat(e)
                        .startsWith("failed: ")
                        .contains("sandbox.kind bwrap needs the program bwrap, which is not on this worker's PATH")
                        .contains("apt-get install bubblewrap"));
    }
}
