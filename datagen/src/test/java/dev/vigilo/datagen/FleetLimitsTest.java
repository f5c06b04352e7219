package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.crash.ChildJvm;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three real datagen processes on one experiment, one control database, a chat step with {@code rate_limit:
 * {requests_per_minute: 600}}: the endpoint (a local server recording when each request arrived and which process
 * sent it) sees the fleet's limit, not three times it (docs/datagen.md, "Fleet limits and budget").
 */
class FleetLimitsTest {
    static final int ITEMS = 150;
    static final int PER_SECOND = 10;
    /** The window the bound is checked over, and the bound: rate × (W + 2 s) (docs/execution.md, "Fleet rate limit"). */
    static final int WINDOW_SECONDS = 5;

    @TempDir
    Path dir;

    private record Arrival(long nanos, String process) {}

    @Test
    void threeProcessesTogetherStayWithinTheRateLimit() throws Exception {
        StringBuilder seeds = new StringBuilder();
        for (int i = 0; i < ITEMS; i++) {
            seeds.append("{\"id\": \"s")
                    .append(i)
                    .append("\", \"n\": ")
                    .append(i)
                    .append("}\n");
        }
        Files.writeString(dir.resolve("seeds.jsonl"), seeds);
        String control = TestPostgres.newDatabaseUrl();
        // Migrated once here, so the children do not race to create the schema.
        ControlDatabase.open(new ControlSettings.Jdbc(control)).close();
        List<Arrival> arrivals = new CopyOnWriteArrayList<>();
        try (OpenAiTestServer server = OpenAiTestServer.start()) {
            server.answerWith(r -> {
                arrivals.add(new Arrival(System.nanoTime(), r.authorization()));
                return Reply.content("answer " + r.lastUserMessage())
                        .withUsage(10, 3)
                        .withLatency(Duration.ofMillis(20));
            });
            Path yaml = dir.resolve("fleet.yaml");
            Files.writeString(yaml, """
            name: fleet
            input: seeds.jsonl
            id_field: id
            steps:
              - name: ask
                kind: chat
                url: %s
                model: m
                api_key_env: FLEET_KEY
                messages: [{role: user, content: "what is {{n}} squared?"}]
                rate_limit: {requests_per_minute: %d}
            """.formatted(server.chatUrl(), PER_SECOND * 60));
            Path root = dir.resolve("root");
            List<Process> procs = new ArrayList<>();
            List<CompletableFuture<List<String>>> outputs = new ArrayList<>();
            for (int p = 0; p < 3; p++) {
                ProcessBuilder pb = new ProcessBuilder(ChildJvm.command(
                                dir, RunMain.class.getName(), yaml.toString(), root.toString(), "exp", "8"))
                        .redirectError(dir.resolve("stderr-" + p + ".txt").toFile());
                pb.environment().put("VIGILO_CONTROL_DB", control);
                // Each process its own key value under one variable: the server tells them apart, the limiter
                // (keyed by the variable's name) does not.
                pb.environment().put("FLEET_KEY", "key-of-process-" + p);
                Process proc = pb.start();
                procs.add(proc);
                outputs.add(CompletableFuture.supplyAsync(() -> ChildJvm.outputLines(proc)));
            }
            for (int p = 0; p < procs.size(); p++) {
                assertThat(procs.get(p).waitFor(300, TimeUnit.SECONDS)).isTrue();
                assertThat(procs.get(p).exitValue())
                        .as("exit of process %d; stderr: %s", p, Files.readString(dir.resolve("stderr-" + p + ".txt")))
                        .isZero();
                assertThat(outputs.get(p).get(10, TimeUnit.SECONDS)).anyMatch(l -> l.startsWith("DONE "));
            }
        }
        ExperimentStatus s = Experiments.status(LogRoot.local(root(dir)), "fleet", "exp");
        assertThat(s.completed()).isEqualTo(ITEMS);
        assertThat(arrivals).hasSize(ITEMS);

        // The busiest window of WINDOW_SECONDS: at most rate × (W + 2 s), the documented overshoot bound; three
        // per-process limits would allow three times the rate.
        long window = Duration.ofSeconds(WINDOW_SECONDS).toNanos();
        List<Arrival> sorted = new ArrayList<>(arrivals);
        sorted.sort((a, b) -> Long.compare(a.nanos(), b.nanos()));
        int busiest = 0;
        Set<String> sendersInBusiest = Set.of();
        for (int i = 0, j = 0; i < sorted.size(); i++) {
            while (sorted.get(i).nanos() - sorted.get(j).nanos() >= window) {
                j++;
            }
            if (i - j + 1 > busiest) {
                busiest = i - j + 1;
                Set<String> senders = new HashSet<>();
                for (int k = j; k <= i; k++) {
                    senders.add(sorted.get(k).process());
                }
                sendersInBusiest = senders;
            }
        }
        assertThat(busiest)
                .as("requests in the busiest %d s window", WINDOW_SECONDS)
                .isLessThanOrEqualTo(PER_SECOND * (WINDOW_SECONDS + 2));
        // All three processes sent (the limit was shared, not won by one of them).
        assertThat(arrivals.stream().map(Arrival::process).distinct()).hasSize(3);
        assertThat(sendersInBusiest)
                .as("processes sending in the busiest window")
                .hasSizeGreaterThanOrEqualTo(2);
        // The whole run took as long as the limit demands: ITEMS requests at PER_SECOND, less the 2 s overshoot.
        double span = (sorted.get(sorted.size() - 1).nanos() - sorted.get(0).nanos()) / 1e9;
        assertThat(span).isGreaterThanOrEqualTo((double) ITEMS / PER_SECOND - 2 - 1);
    }

    /** Requests the endpoint of the circuit test fails. */
    static final int DOWN = 12;

    @Test
    void anOpenCircuitHoldsTheCallsWithoutUsingAttemptsAndTheRunCompletes() throws Exception {
        StringBuilder seeds = new StringBuilder();
        for (int i = 0; i < 10; i++) {
            seeds.append("{\"id\": \"c").append(i).append("\"}\n");
        }
        Files.writeString(dir.resolve("seeds.jsonl"), seeds);
        List<Long> arrivals = new CopyOnWriteArrayList<>();
        try (ControlDatabase db = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
                OpenAiTestServer server = OpenAiTestServer.start()) {
            // The first twelve requests find the endpoint down: more than one call may send (1 + 8 re-sends).
            server.answerWith(r -> {
                arrivals.add(System.nanoTime());
                return arrivals.size() <= DOWN ? Reply.error(503, "down") : Reply.content("ok");
            });
            Path yaml = dir.resolve("circuit.yaml");
            Files.writeString(yaml, """
            name: circuit
            input: seeds.jsonl
            id_field: id
            steps:
              - name: ask
                kind: chat
                url: %s
                model: m
                retries: 0
                messages: [{role: user, content: "hello {{id}}"}]
                circuit_breaker: {failures: 2, cool_down_seconds: 1}
            """.formatted(server.chatUrl()));
            ExperimentStatus s = PipelineRunner.run(
                    PipelineParser.parse(yaml),
                    new PipelineRunner.Options(LogRoot.local(root(dir)), "exp", 4, DatagenProgress.NONE)
                            .withControl(db.jdbi()));
            assertThat(s.completed()).isEqualTo(10);
            assertThat(s.failed()).isZero();
            assertThat(s.failuresByType()).isEmpty();
            assertThat(server.requestCount()).isEqualTo(DOWN + 10);
            // Without the breaker the call that met the outage first would have failed after its 8 re-sends
            // (retries: 0): the run above completed every item. With it, once the circuit opened, one probe per
            // cool-down (1 s) went out. (Counted with room: a first failure's back-off re-send may go out between.)
            int paced = 0;
            for (int i = 3; i <= DOWN; i++) {
                if (arrivals.get(i) - arrivals.get(i - 1) >= 900_000_000L) {
                    paced++;
                }
            }
            assertThat(paced)
                    .as("gaps of a cool-down among the failing requests")
                    .isGreaterThanOrEqualTo(5);
            String reason = db.jdbi()
                    .withHandle(h -> h.createQuery("SELECT circuit || ': ' || circuit_reason FROM endpoint_limiters")
                            .mapTo(String.class)
                            .one());
            assertThat(reason).isEqualTo("closed: the half-open probe was answered");
        }
    }

    private static Path root(Path dir) {
        return dir.resolve("root");
    }
}
