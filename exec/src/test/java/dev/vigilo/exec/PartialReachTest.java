package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.worker.Worker;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Workers that reach only some of a run's execution databases: {@code exitWhenIdle} ends once the databases they
 * reach hold no work, instead of waiting for runs (or shards) only other workers can serve.
 */
class PartialReachTest {
    @TempDir
    Path dir;

    ExecFixture fx;
    OpenAiTestServer llm;
    ExecutionConfig both;
    ExecutionConfig onlyA;
    ExecutionConfig onlyB;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 2_000);
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> OpenAiTestServer.Reply.content("42"));
        ExecutionConfig.Placement a =
                new ExecutionConfig.Placement("a", Optional.of(TestPostgres.newDatabaseUrl(0)), Optional.empty(), 2);
        ExecutionConfig.Placement b =
                new ExecutionConfig.Placement("b", Optional.of(TestPostgres.newDatabaseUrl(1)), Optional.empty(), 2);
        both = new ExecutionConfig("a and b", Map.of("a", a, "b", b));
        onlyA = new ExecutionConfig("a only", Map.of("a", a));
        onlyB = new ExecutionConfig("b only", Map.of("b", b));
    }

    @AfterEach
    void tearDown() {
        llm.close();
        fx.close();
    }

    private String profile() {
        return """
                name: partial-reach
                agent: {kind: http, url: "%s", model: test}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                """.formatted(llm.chatUrl());
    }

    private static Worker.Options exitWhenIdle() {
        return new Worker.Options(
                4,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofSeconds(5));
    }

    private Worker.Report work(ExecutionConfig config) {
        try (Placements p = Placements.open(fx.control, config)) {
            return new Worker(p, fx.storage, exitWhenIdle(), Worker.Listener.NONE).run();
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void aWorkerStopsWhenTheDatabasesItReachesHoldNoWork() {
        UUID split = fx.prepare(profile());
        fx.placeOn(split, both);
        try (Placements p = Placements.open(fx.control, both)) {
            new Admission(p, fx.storage).admit(split);
        }
        // Awaiting admission into "b" alone: a worker that reaches only "a" cannot admit it.
        UUID elsewhere = fx.prepare(profile());
        fx.placeOn(elsewhere, onlyB);

        // 20 chunks, shard s (= chunk s) in "a" when s is even: this worker executes those ten and returns, leaving
        // the other half, the settlement and the other run's admission to workers that can do them.
        Worker.Report partial = work(onlyA);
        assertThat(partial.chunksCompleted()).isEqualTo(10);
        assertThat(partial.casesExecuted()).isEqualTo(1_000);
        assertThat(partial.settlements()).isZero();
        assertThat(partial.admissions()).isZero();
        assertThat(fx.runStatus(split)).isEqualTo("running");
        assertThat(fx.runStatus(elsewhere)).isEqualTo("creating");

        // A worker reaching both finishes the split run, admits and executes the other one, settles both.
        Worker.Report full = work(both);
        assertThat(full.chunksCompleted()).isEqualTo(10 + 20);
        assertThat(full.admissions()).isEqualTo(1);
        assertThat(full.settlements()).isEqualTo(2);
        assertThat(fx.runStatus(split)).isEqualTo("settled");
        assertThat(fx.runStatus(elsewhere)).isEqualTo("settled");

        // Nothing left anywhere: a worker reaching only "a" returns at once.
        assertThat(work(onlyA).chunksCompleted()).isZero();
    }
}
