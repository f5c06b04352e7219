package dev.vigilo.exec.settlement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.worker.TranscriptTest;
import dev.vigilo.exec.worker.Worker;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pause and resume with a real worker over an http agent on a local server: a pause taken while the worker holds a
 * chunk lets that chunk finish and count, and no other chunk is claimed (the worker, idle, exits) until the run is
 * resumed; then the run completes, every case executed once. Also the rules: what can be paused or resumed, and that
 * both are repeatable.
 */
class RunPauseTest {
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;
    /** Open once the test has paused the run: the agent's answers wait for it. */
    final CountDownLatch paused = new CountDownLatch(1);

    final CountDownLatch firstCall = new CountDownLatch(1);

    @BeforeEach
    void setUp() throws Exception {
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            firstCall.countDown();
            try {
                paused.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            Matcher m = QUESTION.matcher(req.lastUserMessage());
            return OpenAiTestServer.Reply.content(m.find() ? Integer.toString(Integer.parseInt(m.group(1)) * 2) : "?");
        });
    }

    private void open(int cases) throws Exception {
        fx = new ExecFixture(dir, cases);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        paused.countDown();
        llm.close();
        if (placements != null) {
            placements.close();
        }
        if (fx != null) {
            fx.close();
        }
    }

    private UUID admitted() {
        UUID run = fx.prepare("""
                name: pause
                agent: {kind: http, url: "%s", model: m}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                """.formatted(llm.chatUrl()));
        new Admission(placements, fx.storage).admit(run);
        return run;
    }

    private ExecutionStatus status(UUID run) {
        return new ExecutionStatusReader(placements).status(run);
    }

    private Worker worker() {
        return new Worker(placements, fx.storage, TranscriptTest.fast(1), Worker.Listener.NONE);
    }

    @Test
    void aPausedRunFinishesItsHeldChunksClaimsNoOtherAndCompletesOnceResumed() throws Exception {
        open(250); // chunks 0 and 1 of 100 cases, chunk 2 of 50
        UUID run = admitted();
        RunPause pauses = new RunPause(placements);
        CompletableFuture<Worker.Report> first = CompletableFuture.supplyAsync(() -> worker().run());
        // The worker holds chunk 0: its first case waits at the agent.
        assertThat(firstCall.await(60, TimeUnit.SECONDS)).isTrue();
        RunPause.Result r = pauses.pause(run, RunPause.BY_COMMAND);
        assertThat(r.outcome()).isEqualTo(RunPause.Outcome.PAUSED);
        assertThat(r.status().spelling()).isEqualTo("paused");
        assertThat(r.shards()).isPositive();
        assertThat(r.unreachable()).isEmpty();
        ExecutionStatus s = status(run);
        assertThat(s.status()).isEqualTo("paused");
        assertThat(s.paused().orElseThrow().reason()).isEqualTo(RunPause.BY_COMMAND);
        assertThat(s.paused().orElseThrow().line()).startsWith("paused since ").endsWith(": by vigilo run pause");
        assertThat(s.toJson()).contains("\"paused\":{\"reason\":\"by vigilo run pause\",\"since\":\"");
        // Pausing again changes nothing.
        assertThat(pauses.pause(run, "again").outcome()).isEqualTo(RunPause.Outcome.ALREADY_PAUSED);
        assertThat(status(run).paused().orElseThrow().reason()).isEqualTo(RunPause.BY_COMMAND);

        // The held chunk finishes and counts; the idle worker then exits without claiming another.
        paused.countDown();
        Worker.Report report = first.get(60, TimeUnit.SECONDS);
        assertThat(report.chunksCompleted()).isPositive().isLessThan(3);
        s = status(run);
        assertThat(s.status()).isEqualTo("paused");
        assertThat(s.execution().chunksDone()).isEqualTo(report.chunksCompleted());
        assertThat(unclaimedChunks(run)).isEqualTo(3 - report.chunksCompleted());
        // A second worker finds nothing to claim while the run is paused.
        assertThat(worker().run().chunksCompleted()).isZero();
        assertThat(unclaimedChunks(run)).isEqualTo(3 - report.chunksCompleted());

        // Resumed: back to running, and the rest of the run executes, every case once.
        RunPause.Result resumed = pauses.resume(run);
        assertThat(resumed.outcome()).isEqualTo(RunPause.Outcome.RESUMED);
        assertThat(resumed.status().spelling()).isEqualTo("running");
        assertThat(status(run).paused()).isEmpty();
        assertThat(pauses.resume(run).outcome()).isEqualTo(RunPause.Outcome.NOT_PAUSED);
        worker().run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        Set<Long> ordinals = new HashSet<>();
        for (Receipt receipt : TranscriptTest.receipts(fx, placements, run)) {
            for (Receipt.CaseResult c : receipt.cases()) {
                assertThat(ordinals.add(c.ordinal()))
                        .as("case %d once", c.ordinal())
                        .isTrue();
            }
        }
        assertThat(ordinals).hasSize(250);
        // Ended: nothing to pause or resume.
        assertThatThrownBy(() -> pauses.pause(run, "late"))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining("is already settled (verdict passed); there is nothing to pause");
        assertThatThrownBy(() -> pauses.resume(run))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining("there is nothing to resume");
    }

    @Test
    void aPauseNowInterruptsTheHeldChunkGivesItBackUnchargedAndTheRunSettlesAfterResume() throws Exception {
        open(150); // chunk 0 of 100 cases, chunk 1 of 50
        UUID run = admitted();
        RunPause pauses = new RunPause(placements);
        CompletableFuture<Worker.Report> first = CompletableFuture.supplyAsync(() -> worker().run());
        // The worker holds chunk 0: its first case waits at the agent (a slow endpoint) until the test lets it go.
        assertThat(firstCall.await(60, TimeUnit.SECONDS)).isTrue();
        RunPause.Result r = pauses.pause(run, RunPause.BY_COMMAND_NOW, true);
        assertThat(r.outcome()).isEqualTo(RunPause.Outcome.PAUSED);
        assertThat(status(run).paused().orElseThrow().reason()).isEqualTo(RunPause.BY_COMMAND_NOW);

        // The worker's heartbeat interrupts the held chunk and gives it back; idle then, the worker exits, although
        // the endpoint never answered: nothing of the chunk was committed and its claim's attempt was refunded.
        Worker.Report report = first.get(60, TimeUnit.SECONDS);
        assertThat(report.chunksCompleted()).isZero();
        assertThat(report.chunksRequeued()).isEqualTo(1);
        assertThat(status(run).status()).isEqualTo("paused");
        assertThat(status(run).execution().chunksDone()).isZero();
        assertThat(unclaimedChunks(run)).isEqualTo(2);
        assertThat(TranscriptTest.receipts(fx, placements, run)).isEmpty();

        // Resumed: both chunks are claimed again and the run settles with one result per case.
        paused.countDown();
        assertThat(pauses.resume(run).status().spelling()).isEqualTo("running");
        worker().run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        Set<Long> ordinals = new HashSet<>();
        for (Receipt receipt : TranscriptTest.receipts(fx, placements, run)) {
            for (Receipt.CaseResult c : receipt.cases()) {
                assertThat(ordinals.add(c.ordinal()))
                        .as("case %d once", c.ordinal())
                        .isTrue();
            }
        }
        assertThat(ordinals).hasSize(150);
        assertThat(attempts(run)).isEqualTo(2); // one counted claim per chunk: the interrupted one was refunded
    }

    @Test
    void pauseNowOnAPausedRunMakesItsPauseInterrupt() throws Exception {
        open(5);
        UUID run = admitted();
        RunPause pauses = new RunPause(placements);
        CompletableFuture<Worker.Report> running = CompletableFuture.supplyAsync(() -> worker().run());
        assertThat(firstCall.await(60, TimeUnit.SECONDS)).isTrue();
        assertThat(pauses.pause(run, RunPause.BY_COMMAND).outcome()).isEqualTo(RunPause.Outcome.PAUSED);
        assertThat(pauses.pause(run, RunPause.BY_COMMAND_NOW, true).outcome())
                .isEqualTo(RunPause.Outcome.ALREADY_PAUSED);
        assertThat(status(run).paused().orElseThrow().reason()).isEqualTo(RunPause.BY_COMMAND_NOW);
        assertThat(running.get(60, TimeUnit.SECONDS).chunksRequeued()).isEqualTo(1);
        assertThat(fx.runStatus(run)).isEqualTo("paused");
        paused.countDown();
        pauses.resume(run);
        worker().run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
    }

    /** The attempts the run's chunk rows count. */
    private long attempts(UUID run) {
        return placements
                .jdbi(placements.aliases().iterator().next())
                .withHandle(h -> h.createQuery("SELECT sum(attempts) FROM exec_chunks WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(Long.class)
                        .one());
    }

    @Test
    void aPausedRunWhoseHeldChunkWasItsLastSettles() throws Exception {
        open(5); // one chunk
        UUID run = admitted();
        CompletableFuture<Worker.Report> running = CompletableFuture.supplyAsync(() -> worker().run());
        assertThat(firstCall.await(60, TimeUnit.SECONDS)).isTrue();
        assertThat(new RunPause(placements).pause(run, RunPause.BY_COMMAND).outcome())
                .isEqualTo(RunPause.Outcome.PAUSED);
        paused.countDown();
        running.get(60, TimeUnit.SECONDS);
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        assertThat(status(run).paused()).isEmpty();
    }

    @Test
    void aRunBeingCreatedCannotBePausedAndAPendingOneResumesToPending() throws Exception {
        open(5);
        UUID creating = fx.prepare();
        assertThatThrownBy(() -> new RunPause(placements).pause(creating, RunPause.BY_COMMAND))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining("is still being created or admitted");
        UUID pending = admitted();
        RunPause pauses = new RunPause(placements);
        assertThat(pauses.pause(pending, RunPause.BY_COMMAND).status().spelling())
                .isEqualTo("paused");
        assertThat(pauses.resume(pending).status().spelling()).isEqualTo("pending");
    }

    /** Chunks of the run never claimed (queued, no attempt). */
    private long unclaimedChunks(UUID run) {
        return placements
                .jdbi(placements.aliases().iterator().next())
                .withHandle(h -> h.createQuery("SELECT count(*) FROM exec_chunks WHERE run_id = :r AND state = 'queued'"
                                + " AND attempts = 0")
                        .bind("r", run)
                        .mapTo(Long.class)
                        .one());
    }
}
