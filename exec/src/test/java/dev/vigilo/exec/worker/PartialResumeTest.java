package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.AgentEnvironment;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.OutageWaits;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.placement.ShardRoutes;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.settlement.RunRerun;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
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
 * Resume from partial receipts on a rerun's chunk (docs/execution.md, "Resume from partial receipts" and "Rerun
 * errors"): a holder of the chunk queued again by {@code rerun-errors} writes partial receipts of the errored cases it
 * executed again and then stops without completing (as if killed after its last partial receipt); the worker that
 * takes the chunk over carries those entries, executes only the rerun's other errored cases, and writes a version 7
 * receipt with both its {@code rerun} and its {@code resumed_from}; the run settles as a clean one and verifies.
 */
class PartialResumeTest {
    private static final int CASES = 30;
    private static final Pattern CASE = Pattern.compile("what is (\\d+) \\* 2");
    private static final String PROFILE = """
            name: partial-rerun
            agent: {kind: http, url: "%s", model: m, max_attempts: 1}
            evaluators: [{name: exact, kind: exact_match}]
            gates: [{name: all, required_evaluators: [exact], min_pass_rate: 0.5}]
            pricing: {m: {input: 1, output: 2}}
            """;

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;
    final AtomicBoolean broken = new AtomicBoolean(true);
    final Map<Long, AtomicInteger> calls = new ConcurrentHashMap<>();

    @BeforeEach
    void setUp() throws Exception {
        fx = new ExecFixture(dir, CASES);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            Matcher m = CASE.matcher(req.lastUserMessage());
            long n = m.find() ? Long.parseLong(m.group(1)) : -1;
            calls.computeIfAbsent(n, k -> new AtomicInteger()).incrementAndGet();
            if (broken.get() && n % 3 == 0) {
                return OpenAiTestServer.Reply.error(503, "overloaded");
            }
            // Slow once recovered: the rerun's 10 cases at 2 at a time take long enough for a time-based link.
            return OpenAiTestServer.Reply.content(Long.toString(n * 2))
                    .withUsage(10, 2)
                    .withLatency(broken.get() ? Duration.ZERO : Duration.ofMillis(400));
        });
    }

    @AfterEach
    void tearDown() {
        llm.close();
        placements.close();
        fx.close();
    }

    private Worker.Report work() {
        return work(Worker.Listener.NONE);
    }

    private Worker.Report work(Worker.Listener listener) {
        return new Worker(placements, fx.storage, TranscriptTest.fast(4), listener).run();
    }

    @Test
    void aRerunsChunkResumedFromItsPartialReceiptsCarriesThemAndVerifies() throws Exception {
        UUID run = fx.prepare(PROFILE.formatted(llm.chatUrl()));
        new Admission(placements, fx.storage).admit(run);
        work();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        broken.set(false);
        assertThat(new RunRerun(placements, fx.storage).rerun(run).outcome()).isEqualTo(RunRerun.Outcome.REOPENED);

        // A first holder executes the rerun's chunk, referencing its partial receipts, and dies before completing.
        var jdbi = placements.jdbi(ExecutionConfig.CONTROL);
        var routes = ShardRoutes.claimable(fx.control.jdbi()).get(ExecutionConfig.CONTROL);
        ChunkTables.Lease first = jdbi.inTransaction(
                        h -> ChunkTables.claim(h, routes, UUID.randomUUID(), Duration.ofSeconds(60)))
                .orElseThrow();
        assertThat(first.rerun()).isPresent();
        List<ChunkTables.Partial> referenced = new ArrayList<>();
        PartialLink link = p -> {
            boolean ok = jdbi.inTransaction(h -> ChunkTables.referencePartial(h, first, p));
            if (ok) {
                synchronized (referenced) {
                    referenced.add(p);
                }
            }
            return ok;
        };
        AgentEnvironment env = AgentEnvironment.system().withBackoff(Duration.ZERO, Duration.ZERO, Duration.ZERO);
        try (RunContexts contexts = new RunContexts(
                        placements,
                        fx.storage,
                        new OutageWaits(Worker.Options.OUTAGE_WAIT, Worker.Listener.NONE, () -> {}));
                ChunkExecution exec = new ChunkExecution(2, env)) {
            exec.execute(first, first.owner(), contexts.get(run, ExecutionConfig.CONTROL), link);
        }
        assertThat(referenced).as("time-based partial receipts of the rerun").isNotEmpty();
        int carried = referenced.get(referenced.size() - 1).cases();
        assertThat(carried).isBetween(1, 10);
        jdbi.useHandle(h -> h.createUpdate("UPDATE exec_chunks SET lease_expires_at = now() - interval '1 second'"
                        + " WHERE run_id = :r AND chunk_index = :c")
                .bind("r", run)
                .bind("c", first.chunkIndex())
                .execute());

        // The worker taking the chunk over asks only for the rerun's cases not carried, and counts the carried ones
        // apart from those it executed (docs/execution.md, "Resume from partial receipts"; its metrics).
        calls.clear();
        AtomicInteger executedCases = new AtomicInteger();
        AtomicInteger completedCases = new AtomicInteger();
        AtomicInteger carriedCases = new AtomicInteger();
        Worker.Report report2 = work(new Worker.Listener() {
            @Override
            public void chunkCompleted(UUID runId, long chunkIndex, int cases) {
                completedCases.addAndGet(cases);
            }

            @Override
            public void caseExecuted(UUID runId, Duration agentTime, boolean errored) {
                executedCases.incrementAndGet();
            }

            @Override
            public void casesCarried(UUID runId, long chunkIndex, int cases) {
                carriedCases.addAndGet(cases);
            }
        });
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        assertThat(calls.values().stream().mapToInt(AtomicInteger::get).sum()).isEqualTo(10 - carried);
        calls.keySet().forEach(n -> assertThat(n % 3).as("case %d asked", n).isZero());
        Receipt r = TranscriptTest.receipts(fx, placements, run).get(0);
        assertThat(r.leaseGeneration()).isEqualTo(first.generation() + 1);
        assertThat(r.rerun().orElseThrow().generation()).isEqualTo(2);
        assertThat(r.rerun().get().executed()).hasSize(10); // carried ones were executed for this rerun too
        assertThat(r.resumed().orElseThrow().carried()).hasSize(carried);
        assertThat(r.resumed().get().carried())
                .allSatisfy(c -> assertThat(c.generation()).isEqualTo(first.generation()));
        assertThat(r.cases()).allSatisfy(c -> assertThat(c.errored()).isFalse());
        // Executed here: the rerun's 10 cases less those carried; carried forward: those and the 20 the rerun kept.
        assertThat(report2.casesExecuted()).isEqualTo(10 - carried);
        assertThat(completedCases.get()).isEqualTo(10 - carried);
        assertThat(executedCases.get()).isEqualTo(10 - carried);
        assertThat(report2.casesCarried()).isEqualTo(CASES - 10 + carried);
        assertThat(carriedCases.get()).isEqualTo(CASES - 10 + carried);
        RunVerifier.Report report = new RunVerifier(placements, fx.storage).verify(run);
        assertThat(report.problem()).isEmpty();
        assertThat(report.intact()).isTrue();
    }
}
