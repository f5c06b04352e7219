package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@code vigilo worker}'s summary line counts the cases it executed apart from those its resumed chunks carried
 * forward from a partial receipt chain (docs/cli.md, "vigilo worker").
 */
class WorkerProgressTest {
    @Test
    void carriedCasesAreCountedApartAndOnlyOnceSomeWereCarried() {
        UUID run = UUID.randomUUID();
        // No status reader is needed: no run settles here.
        try (WorkerProgress p = new WorkerProgress(new PrintWriter(new StringWriter()), null, false)) {
            assertThat(p.summaryLine()).isNull();
            p.chunkCompleted(run, 0, 100);
            assertThat(p.summaryLine()).isEqualTo("worker: 1 chunks, 100 cases executed so far");
            assertThat(p.summaryLine()).as("nothing new").isNull();
            p.chunkCompleted(run, 1, 36);
            p.casesCarried(run, 1, 64);
            assertThat(p.summaryLine()).isEqualTo("worker: 2 chunks, 136 cases executed, 64 carried forward so far");
        }
    }
}
