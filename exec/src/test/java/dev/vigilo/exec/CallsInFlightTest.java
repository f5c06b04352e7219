package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.worker.Worker;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker of concurrency 1,024 with an http agent holds over 1,000 model calls in flight at once on a bounded number
 * of threads, and every case settles once (docs/execution.md, "Calls in flight"). The endpoint holds every answer
 * until the test saw the calls in flight and counted the worker's threads: the test waits for those events, not for
 * a latency.
 */
class CallsInFlightTest {
    private static final int CONCURRENCY = 1024;
    private static final int CASES = 2048;
    /**
     * The most threads the worker may add while 1,024 calls are in flight. Its threads: the chunk pool (at most
     * {@code Worker.chunksHeld(1024)} = 38, here 21: the run's 21 chunks), the executor's work pool (32, created as
     * answers come), the HTTP client's executor (the cores, at least 2) with its selector and timer threads, the
     * heartbeat, the partial flush ticker, the database pools' and the object store's threads, and the JIT and GC
     * threads the load wakes: about 100 at most, 31-35 measured while every answer is held. A thread per call in
     * flight (the case pool and the cached HTTP executor before) would add over 1,024; 160 leaves room for a larger
     * machine's fixed threads and fails long before a thread per call.
     */
    private static final int MAX_ADDED_THREADS = 160;

    @TempDir
    Path dir;

    ExecFixture fx;
    OpenAiTestServer llm;
    final CountDownLatch answer = new CountDownLatch(1);

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, CASES);
        llm = OpenAiTestServer.start();
        // Every answer waits until the test opens the gate: the calls stay in flight until it saw them.
        llm.answerWith(req -> {
            try {
                answer.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return OpenAiTestServer.Reply.content("42");
        });
    }

    @AfterEach
    void tearDown() {
        answer.countDown();
        llm.close();
        fx.close();
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void aThousandCallsInFlightOnABoundedNumberOfThreadsAndEveryCaseSettlesOnce() throws Exception {
        UUID run = fx.prepare("""
                name: in-flight
                agent: {kind: http, url: "%s", model: test, max_attempts: 1, timeout_seconds: 180, connect_timeout_seconds: 120}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.0}
                """.formatted(llm.chatUrl()));
        Worker.Options options = new Worker.Options(
                CONCURRENCY,
                true,
                Duration.ofSeconds(60),
                Duration.ofSeconds(5),
                Duration.ofMillis(100),
                Duration.ofMillis(500),
                Duration.ofSeconds(5));
        try (Placements p = Placements.open(fx.control, ExecutionConfig.defaults())) {
            new Admission(p, fx.storage).admit(run);
            int before = liveThreadsBesidesTheServer();
            AtomicInteger errored = new AtomicInteger();
            Worker.Listener listener = new Worker.Listener() {
                @Override
                public void caseExecuted(UUID runId, Duration agentTime, boolean error) {
                    if (error) {
                        errored.incrementAndGet();
                    }
                }
            };
            CompletableFuture<Worker.Report> worker =
                    CompletableFuture.supplyAsync(() -> new Worker(p, fx.storage, options, listener).run(), r -> {
                        Thread t = new Thread(r, "worker-under-test");
                        t.setDaemon(true);
                        t.start();
                    });
            int peakAdded = 0;
            while (llm.inFlight() < 1000) {
                peakAdded = Math.max(peakAdded, liveThreadsBesidesTheServer() - before);
                assertThat(worker)
                        .as("the worker ended before 1,000 calls were in flight")
                        .isNotDone();
                Thread.sleep(50);
            }
            peakAdded = Math.max(peakAdded, liveThreadsBesidesTheServer() - before);
            int inFlight = llm.inFlight();
            answer.countDown();
            Worker.Report report = worker.get(180, TimeUnit.SECONDS);

            System.out.printf(
                    "calls in flight %d (peak %d), threads added by the worker at most %d%n",
                    inFlight, llm.peakInFlight(), peakAdded);
            assertThat(inFlight).isGreaterThanOrEqualTo(1000);
            assertThat(peakAdded)
                    .as("threads the worker added with %d calls in flight", inFlight)
                    .isLessThanOrEqualTo(MAX_ADDED_THREADS);
            assertThat(report.casesExecuted()).isEqualTo(CASES);
            assertThat(errored).as("cases whose agent call errored").hasValue(0);
            assertThat(report.chunksFailed()).isZero();
            assertThat(fx.runStatus(run)).isEqualTo("settled");
        }
        // One request per case, each case's own: no case ran twice, none was left out.
        assertThat(llm.requestCount()).isEqualTo(CASES);
        Set<String> asked = new HashSet<>();
        llm.requests().forEach(r -> asked.add(r.lastUserMessage()));
        assertThat(asked).hasSize(CASES);
    }

    /**
     * An http agent's cases judged by a {@code kind: judge} evaluator hold no blocking-pool thread while the judge's
     * model answers: with a blocking pool of one thread ({@code --processes 1}), all 64 executions in flight have
     * their judge call at the judge's endpoint at once (the blocking path held one), and every case settles once.
     */
    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void judgeCallsWaitWithoutABlockingThread() throws Exception {
        int concurrency = 64;
        int cases = 128;
        answer.countDown(); // the agent answers at once; the judge holds its answers
        fx.close();
        fx = new ExecFixture(java.nio.file.Files.createDirectories(dir.resolve("judged")), cases);
        CountDownLatch judged = new CountDownLatch(1);
        try (OpenAiTestServer judge = OpenAiTestServer.start()) {
            judge.answerWith(req -> {
                try {
                    judged.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return OpenAiTestServer.Reply.judgement(9, "right");
            });
            UUID run = fx.prepare("""
                    name: judged-in-flight
                    agent: {kind: http, url: "%s", model: test, max_attempts: 1, timeout_seconds: 180}
                    evaluators:
                      - name: quality
                        kind: judge
                        url: "%s"
                        model: judge-model
                        rubric: "Is {{output}} the answer to {{input}}?"
                        scale: {min: 0, max: 10}
                        max_attempts: 1
                        timeout_seconds: 180
                    gates:
                      - {name: all, required_evaluators: [quality], min_pass_rate: 0.5}
                    """.formatted(llm.chatUrl(), judge.chatUrl()));
            Worker.Options options = new Worker.Options(
                            concurrency,
                            true,
                            Duration.ofSeconds(60),
                            Duration.ofSeconds(5),
                            Duration.ofMillis(100),
                            Duration.ofMillis(500),
                            Duration.ofSeconds(5))
                    .withProcesses(1);
            try (Placements p = Placements.open(fx.control, ExecutionConfig.defaults())) {
                new Admission(p, fx.storage).admit(run);
                CompletableFuture<Worker.Report> worker = CompletableFuture.supplyAsync(
                        () -> new Worker(p, fx.storage, options, Worker.Listener.NONE).run(), r -> {
                            Thread t = new Thread(r, "worker-under-test");
                            t.setDaemon(true);
                            t.start();
                        });
                while (judge.inFlight() < concurrency) {
                    assertThat(worker)
                            .as("the worker ended before %d judge calls were in flight", concurrency)
                            .isNotDone();
                    Thread.sleep(20);
                }
                int inFlight = judge.inFlight();
                judged.countDown();
                Worker.Report report = worker.get(180, TimeUnit.SECONDS);
                System.out.printf("judge calls in flight %d on a blocking pool of 1 thread%n", inFlight);
                assertThat(inFlight).isEqualTo(concurrency);
                assertThat(report.casesExecuted()).isEqualTo(cases);
                assertThat(report.chunksFailed()).isZero();
                assertThat(fx.runStatus(run)).isEqualTo("settled");
                assertThat(new dev.vigilo.exec.view.ExecutionStatusReader(p)
                                .status(run)
                                .gates()
                                .get(0)
                                .passed())
                        .isEqualTo(cases);
            }
            assertThat(judge.requestCount()).isEqualTo(cases);
        }
    }

    /** Live threads of this JVM, without the test endpoint's (a thread per request it holds). */
    private static int liveThreadsBesidesTheServer() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        // Enumerating a group reads no stacks: cheap enough to poll with a thousand threads alive.
        Thread[] all = new Thread[root.activeCount() + 256];
        int count = root.enumerate(all, true);
        int n = 0;
        for (int i = 0; i < count; i++) {
            if (!all[i].getName().startsWith("openai-test-server")) {
                n++;
            }
        }
        return n;
    }
}
