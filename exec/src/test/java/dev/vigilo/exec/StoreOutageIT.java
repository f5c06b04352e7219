package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.common.retry.RetryPolicy;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.view.RunResults;
import dev.vigilo.exec.worker.Worker;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The run's local store sits on a real filesystem that fills up (a tmpfs: every write fails with ENOSPC) while a
 * worker executes it, and stays full for three times as many waits as a chunk used to have attempts: the worker waits
 * (no chunk is given back, failed or executed twice), says so in the run's status, and once space is freed the run
 * settles intact.
 */
class StoreOutageIT {
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");
    private static final int CASES = 400;

    @TempDir
    Path dir;

    FullDisk disk;
    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;

    @BeforeEach
    void setUp() throws Exception {
        disk = FullDisk.mount(dir.resolve("disk"), 16);
        fx = new ExecFixture(disk.root(), CASES);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            Matcher m = QUESTION.matcher(req.lastUserMessage());
            return OpenAiTestServer.Reply.content(m.find() ? Long.toString(Long.parseLong(m.group(1)) * 2) : "?");
        });
    }

    @AfterEach
    void tearDown() throws Exception {
        if (llm != null) {
            llm.close();
        }
        if (placements != null) {
            placements.close();
        }
        if (fx != null) {
            fx.close();
        }
        if (disk != null) {
            disk.close();
        }
    }

    private String profile() {
        return """
                name: store-outage
                agent: {kind: http, url: "%s", model: test, max_attempts: 1}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.9}
                """.formatted(llm.chatUrl());
    }

    /** Short back-offs, so that many waits (and, before outages waited, every attempt of a chunk) pass quickly. */
    static Worker.Options options() {
        return new Worker.Options(
                        2,
                        true,
                        Duration.ofSeconds(20),
                        Duration.ofSeconds(1),
                        Duration.ofMillis(100),
                        Duration.ofMillis(200),
                        Duration.ofSeconds(5))
                .withBackoffs(
                        RetryPolicy.of(ChunkTables.MAX_ATTEMPTS, Duration.ofMillis(10), Duration.ofMillis(50)),
                        RetryPolicy.of(Integer.MAX_VALUE, Duration.ofMillis(10), Duration.ofMillis(50)));
    }

    /** Counts what the worker reports about outages and give-backs. */
    static final class Outages implements Worker.Listener {
        final AtomicInteger began = new AtomicInteger();
        final AtomicInteger waited = new AtomicInteger();
        final AtomicInteger ended = new AtomicInteger();
        final List<String> givenBack = new CopyOnWriteArrayList<>();
        final List<String> targets = new CopyOnWriteArrayList<>();
        private final Service service;

        Outages(Service service) {
            this.service = service;
        }

        @Override
        public void outageBegan(Service s, String target, java.time.Instant since, String error) {
            if (s == service) {
                began.incrementAndGet();
                targets.add(target);
            }
        }

        @Override
        public void outageWaited(Service s, String target, int failures) {
            if (s == service) {
                waited.incrementAndGet();
            }
        }

        @Override
        public void outageEnded(Service s, String target, Duration lasted) {
            if (s == service) {
                ended.incrementAndGet();
            }
        }

        @Override
        public void chunkGivenBack(UUID runId, long chunkIndex, String outcome) {
            givenBack.add(chunkIndex + ":" + outcome);
        }
    }

    /** Polls {@code condition} every 20 ms for at most {@code bound}; fails with {@code what} when it never holds. */
    static void await(
            java.util.function.BooleanSupplier condition, Duration bound, java.util.function.Supplier<String> what)
            throws InterruptedException {
        long giveUp = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - giveUp > 0) {
                throw new AssertionError("not within " + bound.toSeconds() + " s: " + what.get());
            }
            Thread.sleep(20);
        }
    }

    @Test
    void aFullDiskOutlastingEveryAttemptOfAChunkIsWaitedOutAndTheRunSettlesIntact() throws Exception {
        UUID run = fx.prepare(profile());
        new Admission(placements, fx.storage).admit(run);
        disk.fill();
        Outages seen = new Outages(Service.STORE);
        Worker worker = new Worker(placements, fx.storage, options(), seen);
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<Worker.Report> report = thread.submit(worker::run);
            // Before outages were waited out, each failed write cost its chunk an attempt: 8 attempts and the run
            // ended failed. Hold the disk full for three times as many waits.
            await(
                    () -> seen.waited.get() >= 3 * ChunkTables.MAX_ATTEMPTS || report.isDone(),
                    Duration.ofSeconds(120),
                    () -> seen.waited.get() + " waits");
            assertThat(report.isDone())
                    .as(
                            "the worker ended while the disk was full: run %s, given back %s",
                            fx.runStatus(run), seen.givenBack)
                    .isFalse();
            String binding = fx.storage.defaultStore().binding().value();
            assertThat(seen.targets).containsOnly(binding);

            // The run's status says what its worker waits for (published in the control database).
            ExecutionStatusReader status = new ExecutionStatusReader(placements);
            await(
                    () -> !status.status(run).waiting().isEmpty(),
                    Duration.ofSeconds(30),
                    () -> "no wait in the status of run " + run);
            ExecutionStatus during = status.status(run);
            assertThat(during.waiting()).singleElement().satisfies(w -> {
                assertThat(w.service()).isEqualTo(Service.STORE);
                assertThat(w.target()).isEqualTo(binding);
                assertThat(w.workers()).isEqualTo(1);
                assertThat(w.error()).contains("No space left on device");
                assertThat(w.describe()).startsWith("waiting for the store since ");
            });
            JsonNode json = new ObjectMapper().readTree(during.toJson());
            assertThat(json.path("waiting").get(0).path("for").asText()).isEqualTo("store");
            assertThat(json.path("waiting").get(0).path("target").asText()).isEqualTo(binding);
            assertThat(seen.givenBack).as("chunks given back during the outage").isEmpty();

            disk.free();
            Worker.Report r = report.get(120, TimeUnit.SECONDS);
            assertThat(fx.runStatus(run)).isEqualTo("settled");
            assertThat(r.chunksFailed()).isZero();
            assertThat(r.chunksRequeued()).isZero();
            assertThat(r.chunksFenced()).isZero();
            assertThat(r.casesExecuted()).isEqualTo(CASES);
            assertThat(seen.ended.get()).isGreaterThanOrEqualTo(1);
            // Each case ran exactly once: one agent call each, one receipt entry each.
            assertThat(llm.requestCount()).isEqualTo(CASES);
            ByteArrayOutputStream results = new ByteArrayOutputStream();
            new RunResults(placements, fx.storage).write(run, results);
            List<String> lines =
                    results.toString(StandardCharsets.UTF_8).lines().toList();
            Set<Long> ordinals = new HashSet<>();
            for (String line : lines) {
                ordinals.add(new ObjectMapper().readTree(line).path("ordinal").asLong());
            }
            assertThat(lines).hasSize(CASES);
            assertThat(ordinals).hasSize(CASES);
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
