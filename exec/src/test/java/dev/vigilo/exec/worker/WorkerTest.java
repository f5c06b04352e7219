package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.placement.ShardRoutes;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkerTest {
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 3_000);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        llm = OpenAiTestServer.start();
        // Answers i * 2, except for every fifth case (wrong) and every 50th (a 500 every time: errored).
        llm.answerWith(req -> {
            Matcher m = QUESTION.matcher(req.lastUserMessage());
            if (!m.find()) {
                return OpenAiTestServer.Reply.content("?");
            }
            long i = Long.parseLong(m.group(1));
            if (i % 50 == 7) {
                return OpenAiTestServer.Reply.error(500, "boom");
            }
            return OpenAiTestServer.Reply.content(i % 5 == 0 ? "wrong" : Long.toString(i * 2));
        });
    }

    @AfterEach
    void tearDown() {
        llm.close();
        placements.close();
        fx.close();
    }

    private String httpProfile() {
        return """
                name: worker-test
                agent: {kind: http, url: "%s", model: test, max_attempts: 2}
                evaluators:
                  - {name: exact, kind: exact_match}
                  - {name: re, kind: regex, pattern: "^[0-9]+$", applies_to: {groups: [math]}}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.7}
                  - {name: math, required_evaluators: [exact, re], min_pass_rate: 0.9}
                """.formatted(llm.chatUrl());
    }

    private Worker.Options fast(int concurrency) {
        return new Worker.Options(
                concurrency,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofSeconds(5));
    }

    @Test
    void executesEveryCaseOnceAndSettlesAgainstAnIndependentCount() {
        UUID run = fx.prepare(httpProfile());
        new Admission(placements, fx.storage).admit(run);
        java.util.concurrent.atomic.AtomicLong claimed = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong completed = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong executed = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong erroredCases = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong settled = new java.util.concurrent.atomic.AtomicLong();
        Worker.Listener counting = new Worker.Listener() {
            @Override
            public void chunkClaimed(UUID runId, long chunkIndex) {
                claimed.incrementAndGet();
            }

            @Override
            public void chunkCompleted(UUID runId, long chunkIndex, int cases) {
                completed.incrementAndGet();
            }

            @Override
            public void caseExecuted(UUID runId, Duration agentTime, boolean errored) {
                assertThat(agentTime.isNegative()).isFalse();
                executed.incrementAndGet();
                if (errored) {
                    erroredCases.incrementAndGet();
                }
            }

            @Override
            public void runSettled(UUID runId, String status, Duration took) {
                settled.incrementAndGet();
            }
        };
        Worker.Report report = new Worker(placements, fx.storage, fast(4), counting).run();
        assertThat(report.chunksCompleted()).isEqualTo(30);
        assertThat(report.casesExecuted()).isEqualTo(3_000);
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        // The listener saw what the report counts (metrics are kept through it).
        assertThat(claimed.get()).isEqualTo(30 + report.chunksRequeued() + report.chunksFenced());
        assertThat(completed.get()).isEqualTo(30);
        assertThat(executed.get()).isEqualTo(3_000);
        assertThat(erroredCases.get()).isEqualTo(60);
        assertThat(settled.get()).isEqualTo(1);

        // Independent computation from the dataset's definition: case i is errored when i % 50 == 7, passes
        // exact when i % 5 != 0; "math" selects i % 3 == 0 and also requires digits only.
        long allPassed = 0,
                allFailed = 0,
                allErrored = 0,
                mathPlanned = 0,
                mathPassed = 0,
                mathFailed = 0,
                mathErrored = 0;
        for (long i = 0; i < 3_000; i++) {
            boolean errored = i % 50 == 7;
            boolean exact = !errored && i % 5 != 0;
            if (errored) {
                allErrored++;
            } else if (exact) {
                allPassed++;
            } else {
                allFailed++;
            }
            if (i % 3 == 0) {
                mathPlanned++;
                if (errored) {
                    mathErrored++;
                } else if (exact) {
                    mathPassed++;
                } else {
                    mathFailed++;
                }
            }
        }
        List<Map<String, Object>> gates = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT name, planned, passed, failed, errored, passed_gate FROM"
                                + " run_gate_results WHERE run_id = :r ORDER BY gate_index")
                        .bind("r", run)
                        .mapToMap()
                        .list());
        assertThat(gates).hasSize(2);
        assertThat(gates.get(0))
                .containsEntry("name", "all")
                .containsEntry("planned", 3_000L)
                .containsEntry("passed", allPassed)
                .containsEntry("failed", allFailed)
                .containsEntry("errored", allErrored)
                .containsEntry("passed_gate", (double) allPassed / 3_000 >= 0.7);
        assertThat(gates.get(1))
                .containsEntry("planned", mathPlanned)
                .containsEntry("passed", mathPassed)
                .containsEntry("failed", mathFailed)
                .containsEntry("errored", mathErrored);
        // Errored cases were retried within max_attempts (2): the endpoint saw 3,000 + 60 requests.
        assertThat(llm.requestCount()).isEqualTo(3_000 + 60);
    }

    @Test
    void aStaleWorkersLateCompletionIsFenced() {
        UUID run = fx.prepare(httpProfile());
        new Admission(placements, fx.storage).admit(run);
        var jdbi = placements.jdbi(ExecutionConfig.CONTROL);
        var routes = ShardRoutes.claimable(fx.control.jdbi()).get(ExecutionConfig.CONTROL);
        UUID stale = UUID.randomUUID();
        ChunkTables.Lease first = jdbi.inTransaction(h -> ChunkTables.claim(h, routes, stale, Duration.ofSeconds(60)))
                .orElseThrow();
        // The stale worker stalls past its lease; another worker takes the chunk over.
        jdbi.useHandle(h -> h.createUpdate("UPDATE exec_chunks SET lease_expires_at = now() - interval '1 second'"
                        + " WHERE run_id = :r AND chunk_index = :c")
                .bind("r", run)
                .bind("c", first.chunkIndex())
                .execute());
        ChunkTables.Lease second = jdbi.inTransaction(
                        h -> ChunkTables.claim(h, routes, UUID.randomUUID(), Duration.ofSeconds(60)))
                .orElseThrow();
        assertThat(second.chunkIndex()).isEqualTo(first.chunkIndex());
        assertThat(second.generation()).isEqualTo(first.generation() + 1);
        // The stale worker writes its receipt and tries to complete: fenced, nothing counts.
        ObjectRef staleReceipt = fx.store.create(
                Receipt.key(run, first.chunkIndex(), first.generation()),
                "{}".getBytes(),
                Deadline.after(Duration.ofSeconds(10)));
        ChunkTables.Completion c = jdbi.inTransaction(h -> ChunkTables.complete(
                h,
                first,
                staleReceipt,
                new ChunkTables.Tallies(0, 0, new long[2], new long[2], new long[2], new long[0])));
        assertThat(c).isEqualTo(ChunkTables.Completion.FENCED);
        assertThat(ChunkTables.renew(jdbi.open(), first, Duration.ofSeconds(60)))
                .isFalse();
        // A real worker then finishes the run; the stale receipt is referenced by no row.
        jdbi.useHandle(h -> h.createUpdate("UPDATE exec_chunks SET lease_expires_at = now() - interval '1 second'"
                        + " WHERE run_id = :r AND chunk_index = :c")
                .bind("r", run)
                .bind("c", first.chunkIndex())
                .execute());
        new Worker(placements, fx.storage, fast(4), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        String key = jdbi.withHandle(
                h -> h.createQuery("SELECT receipt_key FROM exec_chunks WHERE run_id = :r" + " AND chunk_index = :c")
                        .bind("r", run)
                        .bind("c", first.chunkIndex())
                        .mapTo(String.class)
                        .one());
        assertThat(key).isNotEqualTo(staleReceipt.key().value());
        assertThat(key).endsWith("-g" + (second.generation() + 1) + ".json");
    }

    @Test
    void aDamagedCaseFileFailsItsChunkAndTheRun() throws IOException {
        UUID run = fx.prepare(httpProfile());
        new Admission(placements, fx.storage).admit(run);
        // Flip a byte in the first case file: chunk 0 reads it.
        Path casesDir = fx.storeRoot.resolve("datasets/cases");
        Path first;
        try (var files = Files.walk(casesDir)) {
            first = files.filter(Files::isRegularFile).sorted().findFirst().orElseThrow();
        }
        byte[] bytes = Files.readAllBytes(first);
        bytes[bytes.length - 10] ^= 1;
        first.toFile().setWritable(true);
        Files.write(first, bytes);
        new Worker(placements, fx.storage, fast(4), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("failed");
        String reason = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT failure_reason FROM runs WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(String.class)
                        .one());
        assertThat(reason).contains("chunk");
        long failed = placements
                .jdbi(ExecutionConfig.CONTROL)
                .withHandle(
                        h -> h.createQuery("SELECT count(*) FROM exec_chunks WHERE run_id = :r AND state = 'failed'")
                                .bind("r", run)
                                .mapTo(Long.class)
                                .one());
        assertThat(failed).isGreaterThanOrEqualTo(1);
    }

    @Test
    void anAgentThatIsNotFoundErrorsEveryCaseClearly() {
        UUID run = fx.prepare(ExecFixture.PROFILE.replace("[./agent]", "[./no-such-agent-here]"));
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, fast(2), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        Map<String, Object> all = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT planned, errored, passed_gate FROM run_gate_results"
                                + " WHERE run_id = :r AND gate_index = 0")
                        .bind("r", run)
                        .mapToMap()
                        .one());
        assertThat(all).containsEntry("planned", 3_000L).containsEntry("errored", 3_000L);
        assertThat(all).containsEntry("passed_gate", false);
        String receiptKey = placements
                .jdbi(ExecutionConfig.CONTROL)
                .withHandle(h -> h.createQuery(
                                "SELECT receipt_key FROM exec_chunks WHERE run_id = :r AND" + " chunk_index = 0")
                        .bind("r", run)
                        .mapTo(String.class)
                        .one());
        String receipt = new String(fx.store.read(refOf(receiptKey, run), Deadline.after(Duration.ofSeconds(10))));
        assertThat(receipt).contains("\"type\":\"agent_not_found\"").contains("no-such-agent-here");
    }

    private ObjectRef refOf(String key, UUID run) {
        return placements
                .jdbi(ExecutionConfig.CONTROL)
                .withHandle(h -> h.createQuery("SELECT receipt_length, receipt_sha256 FROM exec_chunks WHERE"
                                + " run_id = :r AND receipt_key = :k")
                        .bind("r", run)
                        .bind("k", key)
                        .map((rs, ctx) ->
                                new ObjectRef(ObjectKey.of(key), rs.getLong(1), Sha256.parseHex(rs.getString(2))))
                        .one());
    }

    @Test
    void aChunkClaimedAsTheWorkerStopsIsGivenBack() {
        UUID run = fx.prepare(httpProfile());
        new Admission(placements, fx.storage).admit(run);
        // The worker is stopped right after its first claim committed, before the chunk's task can start.
        Worker[] worker = new Worker[1];
        worker[0] = new Worker(placements, fx.storage, fast(1), new Worker.Listener() {
            @Override
            public void chunkClaimed(UUID runId, long chunkIndex) {
                worker[0].stop();
            }
        });
        worker[0].run();
        long leased = placements
                .jdbi(ExecutionConfig.CONTROL)
                .withHandle(
                        h -> h.createQuery("SELECT count(*) FROM exec_chunks WHERE run_id = :r AND state = 'leased'")
                                .bind("r", run)
                                .mapTo(Long.class)
                                .one());
        assertThat(leased).isZero();
    }

    @Test
    void stopGivesHeldChunksBackAndAnotherWorkerFinishes() throws Exception {
        // Each case takes 300 ms and a chunk 100 cases: once both slots have a case in flight, the worker holds two
        // chunks it cannot finish before the stop.
        CountDownLatch casesInFlight = new CountDownLatch(2);
        llm.answerWith(req -> {
            casesInFlight.countDown();
            return OpenAiTestServer.Reply.content("slow").withLatency(Duration.ofMillis(300));
        });
        UUID run = fx.prepare(httpProfile());
        new Admission(placements, fx.storage).admit(run);
        AtomicInteger claimed = new AtomicInteger();
        AtomicInteger completed = new AtomicInteger();
        List<String> givenBack = new CopyOnWriteArrayList<>();
        Worker w = new Worker(placements, fx.storage, fast(2), new Worker.Listener() {
            @Override
            public void chunkClaimed(UUID runId, long chunkIndex) {
                claimed.incrementAndGet();
            }

            @Override
            public void chunkCompleted(UUID runId, long chunkIndex, int cases) {
                completed.incrementAndGet();
            }

            @Override
            public void chunkGivenBack(UUID runId, long chunkIndex, String outcome) {
                givenBack.add(outcome);
            }
        });
        Thread t = new Thread(w::run);
        t.start();
        assertThat(casesInFlight.await(60, TimeUnit.SECONDS))
                .as("the worker is executing cases")
                .isTrue();
        w.stop();
        t.join(30_000);
        assertThat(t.isAlive()).isFalse();
        // Every chunk it claimed was completed or requeued; at least the two in flight were requeued.
        assertThat(givenBack).hasSizeGreaterThanOrEqualTo(2).containsOnly("requeued");
        assertThat(completed.get() + givenBack.size()).isEqualTo(claimed.get());
        long leased = placements
                .jdbi(ExecutionConfig.CONTROL)
                .withHandle(
                        h -> h.createQuery("SELECT count(*) FROM exec_chunks WHERE run_id = :r AND state = 'leased'")
                                .bind("r", run)
                                .mapTo(Long.class)
                                .one());
        assertThat(leased).isZero();
        llm.answerWith(req -> OpenAiTestServer.Reply.content("1"));
        Worker.Report r = new Worker(placements, fx.storage, fast(4), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        assertThat(r.chunksCompleted()).isEqualTo(30);
        assertThat(Optional.of(r.casesExecuted())).contains(3_000L);
    }

    /**
     * A chunk's end wakes the claiming thread at once and the worker's last chunk is settled at once: with poll and
     * coordination intervals of an hour, the worker executes the whole run, settles it and exits when idle without
     * ever sleeping through an interval (it would hang for an hour if a wake-up were lost or the settlement waited
     * for its poll interval).
     */
    @Test
    void theLastChunkSettlesAndExitsWithoutWaitingAPollInterval() throws Exception {
        UUID run = fx.prepare(httpProfile());
        new Admission(placements, fx.storage).admit(run);
        Worker.Options hourly = new Worker.Options(
                4,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofHours(1),
                Duration.ofHours(1),
                Duration.ofSeconds(5));
        List<String> events = new CopyOnWriteArrayList<>();
        Worker worker = new Worker(placements, fx.storage, hourly, new Worker.Listener() {
            @Override
            public void chunkCompleted(UUID runId, long chunkIndex, int cases) {
                events.add("completed");
            }

            @Override
            public void runSettled(UUID runId, String status, Duration took) {
                events.add("settled " + status);
            }
        });
        java.util.concurrent.CompletableFuture<Worker.Report> done =
                java.util.concurrent.CompletableFuture.supplyAsync(worker::run);
        Worker.Report report;
        try {
            // A failure bound only: a worker pacing its end by its poll interval would take an hour.
            report = done.get(5, TimeUnit.MINUTES);
        } finally {
            worker.stop();
        }
        assertThat(report.chunksCompleted()).isEqualTo(30);
        assertThat(report.settlements()).isEqualTo(1);
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        assertThat(events).hasSize(31).endsWith("settled settled");
        assertThat(events.subList(0, 30)).containsOnly("completed");
    }
}
