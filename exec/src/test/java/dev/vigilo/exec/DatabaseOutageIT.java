package dev.vigilo.exec;

import static dev.vigilo.exec.StoreOutageIT.await;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.worker.Worker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The execution database's server stops while a worker holds chunks whose cases have run (their receipts are written,
 * their completions are not), stays down for longer than the chunks' leases and for more waits than a chunk used to
 * have attempts, and starts again on the same port and data directory: the completions wait and then commit under the
 * leases that executed them, no case runs twice, the status said what the worker waited for (the control database
 * stayed up), and the run settles intact.
 */
class DatabaseOutageIT {
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");
    private static final int CASES = 300;

    @TempDir
    Path dir;

    ExecFixture fx;
    RestartablePostgres server;
    Placements placements;
    OpenAiTestServer llm;
    final CountDownLatch held = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final Set<Long> asked = ConcurrentHashMap.newKeySet();

    @BeforeEach
    void setUp() throws Exception {
        fx = new ExecFixture(dir, CASES);
        server = RestartablePostgres.start(dir.resolve("pgdata"));
        llm = OpenAiTestServer.start();
        // Case 100 (the first of chunk 1) waits for the test's signal before it is answered.
        llm.answerWith(req -> {
            Matcher m = QUESTION.matcher(req.lastUserMessage());
            if (!m.find()) {
                return OpenAiTestServer.Reply.content("?");
            }
            long i = Long.parseLong(m.group(1));
            asked.add(i);
            if (i == 100) {
                held.countDown();
                try {
                    release.await(120, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return OpenAiTestServer.Reply.content(Long.toString(i * 2));
        });
    }

    @AfterEach
    void tearDown() throws Exception {
        release.countDown();
        if (llm != null) {
            llm.close();
        }
        if (placements != null) {
            placements.close();
        }
        if (server != null) {
            server.close();
        }
        if (fx != null) {
            fx.close();
        }
    }

    private String profile() {
        return """
                name: database-outage
                agent: {kind: http, url: "%s", model: test, max_attempts: 1}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.9}
                """.formatted(llm.chatUrl());
    }

    @Test
    void completionsWaitOutTheExecutionDatabaseAndCommitUnderTheirOwnLeases() throws Exception {
        ExecutionConfig config = new ExecutionConfig(
                "one restartable execution database",
                Map.of(
                        "remote",
                        new ExecutionConfig.Placement(
                                "remote", Optional.of(server.newDatabaseUrl()), Optional.empty(), 4)));
        placements = Placements.open(fx.control, config);
        UUID run = fx.prepare(profile());
        fx.placeOn(run, config);
        new Admission(placements, fx.storage).admit(run);

        StoreOutageIT.Outages seen = new StoreOutageIT.Outages(Service.DATABASE);
        Set<Long> completed = ConcurrentHashMap.newKeySet();
        Worker.Listener listener = new Worker.Listener() {
            @Override
            public void chunkCompleted(UUID runId, long chunkIndex, int cases) {
                completed.add(chunkIndex);
            }

            @Override
            public void chunkGivenBack(UUID runId, long chunkIndex, String outcome) {
                seen.chunkGivenBack(runId, chunkIndex, outcome);
            }

            @Override
            public void outageBegan(Service s, String target, java.time.Instant since, String error) {
                seen.outageBegan(s, target, since, error);
            }

            @Override
            public void outageWaited(Service s, String target, int failures) {
                seen.outageWaited(s, target, failures);
            }

            @Override
            public void outageEnded(Service s, String target, Duration lasted) {
                seen.outageEnded(s, target, lasted);
            }
        };
        // One chunk at a time; leases of 3 s, renewed every second: the outage below outlasts them.
        Worker.Options options = new Worker.Options(
                        1,
                        true,
                        Duration.ofSeconds(3),
                        Duration.ofSeconds(1),
                        Duration.ofMillis(100),
                        Duration.ofMillis(200),
                        Duration.ofSeconds(5))
                .withBackoffs(
                        StoreOutageIT.options().chunkRetry(),
                        StoreOutageIT.options().outageWait());
        Worker worker = new Worker(placements, fx.storage, options, listener);
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<Worker.Report> report = thread.submit(worker::run);
            await(
                    () -> completed.contains(0L) && held.getCount() == 0,
                    Duration.ofSeconds(120),
                    () -> "chunk 0 done" + " and a later chunk executing: completed " + completed);

            server.stop();
            release.countDown(); // chunk 1's cases finish now; its completion meets the stopped server
            long stopped = System.nanoTime();
            await(
                    () -> seen.waited.get() > ChunkTables.MAX_ATTEMPTS
                            && System.nanoTime() - stopped > options.lease().toNanos(),
                    Duration.ofSeconds(180),
                    () -> seen.waited.get() + " waits for the database");
            assertThat(report.isDone()).isFalse();
            assertThat(seen.targets).contains("remote");

            // The control database is up: the status reads it, lists the unreachable execution database and says
            // what the worker waits for.
            ExecutionStatusReader status = new ExecutionStatusReader(placements);
            await(
                    () -> !status.status(run).waiting().isEmpty(),
                    Duration.ofSeconds(60),
                    () -> "no wait in the status of run " + run);
            ExecutionStatus during = status.status(run);
            assertThat(during.execution().unreachable()).containsExactly("remote");
            assertThat(during.execution().shards())
                    .allSatisfy(s -> assertThat(s.known()).isFalse());
            assertThat(during.waiting()).singleElement().satisfies(w -> {
                assertThat(w.service()).isEqualTo(Service.DATABASE);
                assertThat(w.target()).isEqualTo("remote");
                assertThat(w.describe()).startsWith("waiting for the database since ");
            });
            assertThat(seen.givenBack).as("chunks given back during the outage").isEmpty();

            server.restart();
            Worker.Report r = report.get(180, TimeUnit.SECONDS);
            assertThat(fx.runStatus(run)).isEqualTo("settled");
            assertThat(r.chunksFailed()).isZero();
            assertThat(r.chunksFenced())
                    .as("completions fenced: their leases were taken over")
                    .isZero();
            assertThat(r.chunksCompleted()).isEqualTo(3);
            // No case ran twice: one agent call per case.
            assertThat(llm.requestCount()).isEqualTo(CASES);
            assertThat(asked).hasSize(CASES);
            assertThat(seen.ended.get()).isGreaterThanOrEqualTo(1);
            RunVerifier.Report verified = new RunVerifier(placements, fx.storage).verify(run);
            assertThat(verified.problem()).isEmpty();
            assertThat(verified.intact()).isTrue();
            assertThat(status.status(run).waiting()).isEmpty();
        } finally {
            worker.stop();
            thread.shutdownNow();
        }
    }
}
