package dev.vigilo.exec;

import static dev.vigilo.exec.StoreOutageIT.await;
import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.storage.S3ProxyFixture;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
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
 * The run's S3 store (s3proxy in this JVM, reached through a forwarder that is taken down) cannot be reached when a
 * worker starts, so not even the run's plan can be read, and stays down for three times as many waits as a chunk
 * used to have attempts; when it is back on the same endpoint the worker reads the plan and the cases, writes the
 * transcripts and receipts, and the run settles intact with every case executed once.
 */
class S3OutageIT {
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");
    private static final int CASES = 300;

    @TempDir
    Path dir;

    S3ProxyFixture s3;
    SwitchableTcpProxy endpoint;
    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;

    @BeforeEach
    void setUp() throws Exception {
        s3 = S3ProxyFixture.start();
        endpoint = new SwitchableTcpProxy(s3.endpoint().getPort());
        Path toml = Files.writeString(
                dir.resolve("storage.toml"), S3ProxyFixture.storageToml("s3", endpoint.endpoint(), "outage"));
        fx = new ExecFixture(dir, CASES, StorageConfig.load(toml));
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
        if (endpoint != null) {
            endpoint.close();
        }
        if (s3 != null) {
            s3.close();
        }
    }

    @Test
    void anUnreachableS3StoreIsWaitedOutAndTheRunSettlesIntact() throws Exception {
        UUID run = fx.prepare("""
                name: s3-outage
                agent: {kind: http, url: "%s", model: test, max_attempts: 1}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.9}
                """.formatted(llm.chatUrl()));
        new Admission(placements, fx.storage).admit(run);
        endpoint.down();
        StoreOutageIT.Outages seen = new StoreOutageIT.Outages(Service.STORE);
        Worker worker = new Worker(placements, fx.storage, StoreOutageIT.options(), seen);
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<Worker.Report> report = thread.submit(worker::run);
            await(
                    () -> seen.waited.get() >= 3 * ChunkTables.MAX_ATTEMPTS || report.isDone(),
                    Duration.ofSeconds(180),
                    () -> seen.waited.get() + " waits");
            assertThat(report.isDone())
                    .as(
                            "the worker ended while the store was down: run %s, given back %s",
                            fx.runStatus(run), seen.givenBack)
                    .isFalse();
            String binding = fx.storage.defaultStore().binding().value();
            assertThat(seen.targets).containsOnly(binding);
            ExecutionStatusReader status = new ExecutionStatusReader(placements);
            await(
                    () -> !status.status(run).waiting().isEmpty(),
                    Duration.ofSeconds(30),
                    () -> "no wait in the status of run " + run);
            assertThat(status.status(run).waiting()).singleElement().satisfies(w -> {
                assertThat(w.service()).isEqualTo(Service.STORE);
                assertThat(w.target()).isEqualTo(binding);
            });
            assertThat(seen.givenBack).isEmpty();
            assertThat(llm.requestCount())
                    .as("no case runs before its chunk could be read")
                    .isZero();

            endpoint.up();
            Worker.Report r = report.get(180, TimeUnit.SECONDS);
            assertThat(fx.runStatus(run)).isEqualTo("settled");
            assertThat(r.chunksFailed()).isZero();
            assertThat(r.chunksRequeued()).isZero();
            assertThat(r.casesExecuted()).isEqualTo(CASES);
            assertThat(llm.requestCount()).isEqualTo(CASES);
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
