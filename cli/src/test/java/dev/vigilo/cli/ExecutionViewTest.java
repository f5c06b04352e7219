package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.Service;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The text view of a run whose execution database cannot be read and whose workers wait for services. */
class ExecutionViewTest {
    @Test
    void printsTheUnreachableDatabasesAndOneLinePerWait() {
        ExecutionStatus.Progress progress = new ExecutionStatus.Progress(
                10,
                3,
                0,
                1000,
                300,
                List.of(
                        new ExecutionStatus.ShardProgress(0, "a", "active", 5, 3, 0, 500, 300),
                        new ExecutionStatus.ShardProgress(1, "b", "active", 5, -1, -1, 500, -1)),
                List.of("b"));
        ExecutionStatus s = new ExecutionStatus(
                UUID.randomUUID(),
                "running",
                Optional.empty(),
                Optional.empty(),
                progress,
                List.of(),
                false,
                List.of(
                        new ExecutionStatus.Wait(
                                Service.DATABASE,
                                "b",
                                Instant.parse("2026-01-02T03:04:05.9Z"),
                                2,
                                "completion failed: connection refused"),
                        new ExecutionStatus.Wait(
                                Service.STORE,
                                "local:/srv/objects",
                                Instant.parse("2026-01-02T03:05:00Z"),
                                1,
                                "cannot write x:\nNo space left on device")));
        StringWriter text = new StringWriter();
        ExecutionView.print(new PrintWriter(text, true), s, true);
        assertThat(text.toString())
                .contains("progress: 3 of 10 chunks done, 300 of 1000 cases done\n"
                        + "unreachable now: execution database b (progress of 1 shard unknown, not counted above)\n"
                        + "waiting for the database since 2026-01-02T03:04:05Z (b, 2 workers): completion failed:"
                        + " connection refused\n"
                        + "waiting for the store since 2026-01-02T03:05:00Z (local:/srv/objects, 1 worker): cannot"
                        + " write x: No space left on device\n"
                        + "verdict: not yet");
    }
}
