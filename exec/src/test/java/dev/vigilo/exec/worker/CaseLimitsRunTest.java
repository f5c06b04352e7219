package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.Receipt;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code limits.case_seconds} in a real run: a command agent that hangs on some cases is killed when its case's time
 * is up, not retried, and those cases end errored with {@code limit_exceeded} naming the limit; the other cases are
 * untouched, the receipts verify, and the gates count the stopped cases as errored.
 */
class CaseLimitsRunTest {
    private static final int CASES = 24;

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, CASES);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        placements.close();
        fx.close();
    }

    @Test
    void aHangingCaseIsStoppedAtItsCaseSecondsAndTheOthersAreNot() throws IOException {
        Path agent = dir.resolve("agent.sh");
        Files.writeString(agent, """
                #!/bin/sh
                n=$(sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
                if [ $((n % 6)) -eq 0 ]; then exec sleep 120; fi
                echo $((n * 2))
                """);
        Files.setPosixFilePermissions(agent, PosixFilePermissions.fromString("rwxr-xr-x"));
        UUID run = fx.prepare("""
                name: limits
                agent: {kind: command, command: ["%s"], timeout_seconds: 300, max_attempts: 3}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                limits: {case_seconds: 1}
                """.formatted(agent));
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, TranscriptTest.fast(8), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");

        List<Receipt> receipts = TranscriptTest.receipts(fx, placements, run);
        int stopped = 0;
        for (Receipt r : receipts) {
            for (Receipt.CaseResult c : r.cases()) {
                if (c.ordinal() % 6 == 0) {
                    stopped++;
                    assertThat(c.errored()).isTrue();
                    Receipt.Error e = c.error().orElseThrow();
                    assertThat(e.type()).isEqualTo("limit_exceeded");
                    assertThat(e.message()).startsWith("limits.case_seconds: the case ran ");
                    assertThat(c.attempts()).as("a case's time is not retried").isEqualTo(1);
                    assertThat(c.transcripts()).hasSize(1);
                    assertThat(c.gates()).containsEntry("all", Receipt.GateOutcome.ERRORED);
                } else {
                    assertThat(c.errored()).as("case %d", c.ordinal()).isFalse();
                    assertThat(c.gates()).containsEntry("all", Receipt.GateOutcome.PASSED);
                }
                assertThat(c.usage()).contains(Receipt.Usage.NONE);
            }
        }
        assertThat(stopped).isEqualTo(4);
        RunVerifier.Report report = new RunVerifier(placements, fx.storage).verify(run);
        assertThat(report.problem()).isEmpty();
        assertThat(report.gates().get(0).errored()).isEqualTo(4);
    }
}
