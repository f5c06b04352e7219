package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.GateTable;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.RerunRecords;
import dev.vigilo.exec.settlement.RunCancellation;
import dev.vigilo.exec.settlement.RunRerun;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.worker.TranscriptTest;
import dev.vigilo.exec.worker.Worker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo run rerun-errors} end to end (docs/execution.md, "Rerun errors"): an OpenAI-compatible test server
 * fails some cases (503 on every attempt, or answers without choices that still report usage) so they end errored;
 * the endpoint recovers; the rerun sends exactly one request per errored case and none for passed or failed ones; the
 * final gate table is a clean run's on the same data; usage counts every answered call once, over both executions;
 * {@code vigilo verify} passes, and fails when an earlier generation's receipt or history row is altered.
 */
class RerunErrorsTest {
    private static final int CASES = 30;
    private static final Pattern CASE = Pattern.compile("what is (\\d+) \\* 2");
    private static final String PROFILE = """
            name: rerun
            agent: {kind: http, url: "%s", model: m, max_attempts: 2}
            evaluators: [{name: exact, kind: exact_match}]
            gates: [{name: all, required_evaluators: [exact], min_pass_rate: 0.5}]
            pricing: {m: {input: 1, output: 2}}
            """;
    /** An answer that reports usage but carries no choice: the agent cannot use it (an error), its tokens were paid. */
    private static final String NO_CHOICES = "{\"id\":\"x\",\"object\":\"chat.completion\",\"model\":\"m\","
            + "\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2,\"total_tokens\":12}}";

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;
    final AtomicBoolean broken = new AtomicBoolean(true);
    final Map<Long, AtomicInteger> calls = new ConcurrentHashMap<>();
    /** Answers that reported usage (each is one paid call the run must count once). */
    final AtomicInteger paid = new AtomicInteger();

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, CASES);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            Matcher m = CASE.matcher(req.lastUserMessage());
            long n = m.find() ? Long.parseLong(m.group(1)) : -1;
            calls.computeIfAbsent(n, k -> new AtomicInteger()).incrementAndGet();
            if (broken.get() && n % 5 == 0) {
                return OpenAiTestServer.Reply.error(503, "overloaded");
            }
            if (broken.get() && n % 5 == 1) {
                paid.incrementAndGet();
                return OpenAiTestServer.Reply.raw(200, NO_CHOICES);
            }
            paid.incrementAndGet();
            // Every seventh case is answered wrongly: it fails, and a rerun must leave it alone.
            long answer = n % 7 == 3 ? n * 3 : n * 2;
            return OpenAiTestServer.Reply.content(Long.toString(answer)).withUsage(10, 2);
        });
    }

    @AfterEach
    void tearDown() {
        llm.close();
        placements.close();
        fx.close();
    }

    private UUID runToTheEnd() {
        UUID run = fx.prepare(PROFILE.formatted(llm.chatUrl()));
        new Admission(placements, fx.storage).admit(run);
        work();
        return run;
    }

    private void work() {
        new Worker(placements, fx.storage, TranscriptTest.fast(4), Worker.Listener.NONE).run();
    }

    private List<GateResult> gates(UUID run) {
        return placements.control().withHandle(h -> GateTable.results(h, run));
    }

    @Test
    void onlyTheErroredCasesRunAgainAndTheRunSettlesAsACleanOne() throws IOException {
        UUID run = runToTheEnd();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        List<GateResult> before = gates(run);
        assertThat(before.get(0).errored()).isEqualTo(12); // ordinals 0..29 with n % 5 in {0, 1}
        RunRerun rerun = new RunRerun(placements, fx.storage);

        // The dry run lists the errored cases by type and changes nothing.
        RunRerun.Plan plan = rerun.plan(run);
        assertThat(plan.generation()).isEqualTo(2);
        assertThat(plan.cases()).hasSize(12);
        assertThat(plan.byType()).containsOnlyKeys("http_status", "invalid_response");
        assertThat(plan.byType().get("http_status"))
                .extracting(RunRerun.Case::ordinal)
                .containsExactly(0L, 5L, 10L, 15L, 20L, 25L);
        assertThat(plan.byType().get("invalid_response"))
                .extracting(RunRerun.Case::ordinal)
                .containsExactly(1L, 6L, 11L, 16L, 21L, 26L);
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        assertThat(gates(run)).isEqualTo(before);

        // The endpoint recovers; the rerun calls it once per errored case and for nothing else.
        broken.set(false);
        calls.clear();
        RunRerun.Result result = rerun.rerun(run);
        assertThat(result.outcome()).isEqualTo(RunRerun.Outcome.REOPENED);
        assertThat(fx.runStatus(run)).isEqualTo("pending");
        work();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        assertThat(calls.keySet()).containsExactlyInAnyOrder(0L, 1L, 5L, 6L, 10L, 11L, 15L, 16L, 20L, 21L, 25L, 26L);
        assertThat(calls.values()).allMatch(c -> c.get() == 1);

        // Usage counts every paid call once, over both executions.
        UsageSummary usage =
                new ExecutionStatusReader(placements).status(run).runUsage().orElseThrow();
        assertThat(usage.agent().calls()).isEqualTo(paid.get());
        assertThat(usage.agent().inputTokens()).isEqualTo(10L * paid.get());

        // The earlier settlement stays readable, and the whole history verifies.
        List<RerunRecords.Settled> history = placements.control().withHandle(h -> RerunRecords.history(h, run));
        assertThat(history).hasSize(1);
        assertThat(history.get(0).gates().get(0).path("errored").asLong()).isEqualTo(12);
        assertThat(history.get(0).rerun().path("cases").asInt()).isEqualTo(12);
        RunVerifier verifier = new RunVerifier(placements, fx.storage);
        assertThat(verifier.verify(run).problem()).isEmpty();

        // A clean run on the same data settles on the same gate table.
        calls.clear();
        UUID clean = runToTheEnd();
        assertThat(gates(run)).isEqualTo(gates(clean));
        assertThat(gates(run).get(0).errored()).isZero();

        // Nothing errored any more: the rerun says so and changes nothing.
        assertThat(rerun.rerun(run).outcome()).isEqualTo(RunRerun.Outcome.NOTHING_TO_RERUN);
        assertThat(fx.runStatus(run)).isEqualTo("settled");

        // An altered history row or earlier receipt fails verification.
        placements
                .control()
                .useHandle(h -> h.execute(
                        "UPDATE run_rerun_history SET gates = jsonb_set(gates,"
                                + " '{0,errored}', '11') WHERE run_id = ?",
                        run));
        assertThat(verifier.verify(run).problem())
                .hasValueSatisfying(p -> assertThat(p).contains("settlement generation 1"));
        placements
                .control()
                .useHandle(h -> h.execute(
                        "UPDATE run_rerun_history SET gates = jsonb_set(gates,"
                                + " '{0,errored}', '12') WHERE run_id = ?",
                        run));
        assertThat(verifier.verify(run).problem()).isEmpty();

        Receipt rerunReceipt = TranscriptTest.receipts(fx, placements, run).stream()
                .filter(r -> r.rerun().isPresent())
                .findFirst()
                .orElseThrow();
        String earlier =
                rerunReceipt.rerun().get().previous().orElseThrow().key().value();
        Path file = fx.storeRoot.resolve(earlier);
        String text = Files.readString(file);
        file.toFile().setWritable(true);
        Files.writeString(
                file, text.replace("\"http_status\"", "\"timeout\"").replace("\"invalid_response\"", "\"timeout\""));
        RunVerifier.Report tampered = verifier.verify(run);
        assertThat(tampered.problem()).isPresent();
        assertThat(tampered.damagedKey()).contains(earlier);
    }

    @Test
    void withEpochsOnlyTheErroredEpochsRunAgain() {
        Map<String, AtomicInteger> byEpoch = new ConcurrentHashMap<>();
        AtomicBoolean down = new AtomicBoolean(true);
        llm.answerWith(req -> {
            Matcher m = CASE.matcher(req.lastUserMessage());
            long n = m.find() ? Long.parseLong(m.group(1)) : -1;
            int seed = req.body().path("seed").asInt(-1);
            byEpoch.computeIfAbsent(n + "/" + seed, k -> new AtomicInteger()).incrementAndGet();
            if (down.get() && n % 5 == 0 && seed == 2) {
                return OpenAiTestServer.Reply.error(503, "overloaded");
            }
            return OpenAiTestServer.Reply.content(Long.toString(n * 2)).withUsage(10, 2);
        });
        UUID run = fx.prepare("""
                name: rerun-epochs
                agent: {kind: http, url: "%s", model: m, max_attempts: 1, seed_per_epoch: true}
                epochs: {count: 3, reducer: majority}
                evaluators: [{name: exact, kind: exact_match}]
                gates: [{name: all, required_evaluators: [exact], min_pass_rate: 0.5}]
                """.formatted(llm.chatUrl()));
        new Admission(placements, fx.storage).admit(run);
        work();
        assertThat(gates(run).get(0).errored()).isEqualTo(6);
        RunRerun rerun = new RunRerun(placements, fx.storage);
        RunRerun.Plan plan = rerun.plan(run);
        assertThat(plan.cases())
                .hasSize(6)
                .allSatisfy(c -> assertThat(c.epochs()).containsExactly(2));

        down.set(false);
        byEpoch.clear();
        rerun.rerun(run);
        work();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        assertThat(byEpoch.keySet()).containsExactlyInAnyOrder("0/2", "5/2", "10/2", "15/2", "20/2", "25/2");
        assertThat(byEpoch.values()).allMatch(c -> c.get() == 1);
        assertThat(gates(run).get(0).errored()).isZero();
        assertThat(gates(run).get(0).passed()).isEqualTo(CASES);
        assertThat(gates(run).get(0).passAtK()).isPresent();
        for (Receipt r : TranscriptTest.receipts(fx, placements, run)) {
            for (Receipt.CaseResult c : r.cases()) {
                assertThat(c.epochs()).hasSize(3).noneMatch(Receipt::erroredExecution);
            }
        }
        assertThat(new RunVerifier(placements, fx.storage).verify(run).problem())
                .isEmpty();
    }

    @Test
    void aReopeningInterruptedAfterItsLocalCommitsIsFinishedByRepeatingIt() {
        UUID run = runToTheEnd();
        RunRerun rerun = new RunRerun(placements, fx.storage);
        RunRerun.Plan plan = rerun.plan(run);
        // As if the command died after the execution database's commit and before the control database's: the chunks
        // are queued for generation 2, the run is still settled with its old gate table.
        int queued = placements
                .jdbi(ExecutionConfig.CONTROL)
                .inTransaction(h -> RerunRecords.requeue(h, run, plan.chunks(), plan.generation()));
        assertThat(queued).isEqualTo(plan.chunks().size());
        assertThat(fx.runStatus(run)).isEqualTo("settled");

        broken.set(false);
        RunRerun.Plan again = rerun.plan(run);
        assertThat(again.generation()).isEqualTo(2);
        assertThat(again.cases()).isEqualTo(plan.cases());
        RunRerun.Result result = rerun.rerun(run);
        assertThat(result.outcome()).isEqualTo(RunRerun.Outcome.REOPENED);
        assertThat(result.queued()).as("the rows were queued already").isZero();
        work();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        assertThat(gates(run).get(0).errored()).isZero();
        assertThat(new RunVerifier(placements, fx.storage).verify(run).problem())
                .isEmpty();
    }

    @Test
    void badInputsAreRefusedAndChangeNothing() {
        RunRerun rerun = new RunRerun(placements, fx.storage);
        UUID unknown = UUID.randomUUID();
        assertThatThrownBy(() -> rerun.plan(unknown)).isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> rerun.rerun(unknown)).isInstanceOf(NotFoundException.class);

        UUID pending = fx.prepare(PROFILE.formatted(llm.chatUrl()));
        new Admission(placements, fx.storage).admit(pending);
        assertThatThrownBy(() -> rerun.rerun(pending))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining("is pending; only a settled or failed run can rerun its errors");
        new RunCancellation(placements).cancel(pending);
        assertThatThrownBy(() -> rerun.plan(pending))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining("was cancelled");
        assertThat(fx.runStatus(pending)).isEqualTo("cancelled");

        broken.set(false);
        UUID clean = runToTheEnd();
        List<GateResult> settled = gates(clean);
        RunRerun.Result nothing = rerun.rerun(clean);
        assertThat(nothing.outcome()).isEqualTo(RunRerun.Outcome.NOTHING_TO_RERUN);
        assertThat(nothing.plan().empty()).isTrue();
        assertThat(fx.runStatus(clean)).isEqualTo("settled");
        assertThat(gates(clean)).isEqualTo(settled);
        List<RerunRecords.Settled> history = placements.control().withHandle(h -> RerunRecords.history(h, clean));
        assertThat(history).isEmpty();
    }
}
