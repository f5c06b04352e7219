package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.worker.Worker;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run placed over two execution databases is claimed from both in turn, not from the first until it is empty: the
 * bookkeeping of a large run spreads over every database it was placed on (docs/execution.md, "Workers").
 */
class ClaimSpreadTest {
    @TempDir
    Path dir;

    ExecFixture fx;
    OpenAiTestServer llm;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 600);
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> OpenAiTestServer.Reply.content("42"));
    }

    @AfterEach
    void tearDown() {
        llm.close();
        fx.close();
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void consecutiveClaimsAlternateBetweenTheRunsExecutionDatabases() {
        ExecutionConfig.Placement a =
                new ExecutionConfig.Placement("a", Optional.of(TestPostgres.newDatabaseUrl(0)), Optional.empty(), 2);
        ExecutionConfig.Placement b =
                new ExecutionConfig.Placement("b", Optional.of(TestPostgres.newDatabaseUrl(1)), Optional.empty(), 2);
        ExecutionConfig both = new ExecutionConfig("a and b", Map.of("a", a, "b", b));
        UUID run = fx.prepare("""
                name: spread
                agent: {kind: http, url: "%s", model: test}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                """.formatted(llm.chatUrl()));
        fx.placeOn(run, both);
        List<Long> claims = new CopyOnWriteArrayList<>();
        Worker.Listener listener = new Worker.Listener() {
            @Override
            public void chunkClaimed(UUID runId, long chunkIndex) {
                claims.add(chunkIndex);
            }
        };
        // One chunk at a time, so the claims are the worker's whole order.
        Worker.Options oneAtATime = new Worker.Options(
                1,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofSeconds(5));
        try (Placements p = Placements.open(fx.control, both)) {
            new Admission(p, fx.storage).admit(run);
            Worker.Report report = new Worker(p, fx.storage, oneAtATime, listener).run();
            assertThat(report.chunksCompleted()).isEqualTo(6);
        }
        // 6 chunks of 100 cases, chunk s in shard s, shard s in "a" when s is even (round-robin placement): the
        // database of each
        // claim differs from the previous one's.
        assertThat(claims).hasSize(6).doesNotHaveDuplicates();
        for (int i = 1; i < claims.size(); i++) {
            assertThat(claims.get(i) % 2)
                    .as(
                            "claim %d (chunk %d) and claim %d (chunk %d), of %s",
                            i - 1, claims.get(i - 1), i, claims.get(i), claims)
                    .isNotEqualTo(claims.get(i - 1) % 2);
        }
        assertThat(fx.runStatus(run)).isEqualTo("settled");
    }
}
