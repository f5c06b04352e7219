package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fleet rate limit and circuit breaker (docs/execution.md, "Fleet rate limit", "Circuit breaker") with real
 * {@code vigilo worker} processes against a local OpenAI-compatible endpoint ({@link CountingChatEndpoint}) that
 * counts requests per second and per api key. Each worker sends its own key value under the same variable name, so
 * the endpoint tells them apart while they share one limiter (its key names the variable, not the value).
 *
 * <p>The measuring window is {@value #DEFAULT_WINDOW_SECONDS} s (CI); {@code -Dvigilo.fleetLimit.windowSeconds=N}
 * shortens it for local runs.
 */
class FleetLimitIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int DEFAULT_WINDOW_SECONDS = 60;
    private static final int WINDOW_SECONDS =
            Integer.getInteger("vigilo.fleetLimit.windowSeconds", DEFAULT_WINDOW_SECONDS);
    private static final int RPM = 600;
    private static final int WORKERS = 3;

    @TempDir
    Path home;

    private final List<Process> workers = new ArrayList<>();

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void threeWorkersStayWithinOneLimitAndA429StormLowersItForAllOfThem() throws Exception {
        String db = TestPostgres.newDatabaseUrl();
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", db));
        // Enough cases for the start-up, the window and the storm at the limit: the run never runs dry. Chunks of 100
        // cases and 4 chunks per worker: each of the three workers holds chunks from the start.
        int cases = RPM / 60 * (WINDOW_SECONDS + 90);
        try (CountingChatEndpoint endpoint = new CountingChatEndpoint()) {
            String run = createRun(cli, cases, """
                    name: fleet-limit
                    agent:
                      kind: http
                      url: "%s"
                      model: m
                      api_key_env: FLEET_KEY
                      max_attempts: 10
                      rate_limit: {requests_per_minute: %d}
                    evaluators: [{name: exact, kind: exact_match}]
                    gates: [{name: all, required_evaluators: [exact], min_pass_rate: 0.0}]
                    """.formatted(endpoint.chatUrl(), RPM));
            try {
                for (int i = 1; i <= WORKERS; i++) {
                    startWorker(db, "key-" + i, "4");
                }
                await(
                        "every worker sends",
                        180,
                        () -> endpoint.arrivals().stream()
                                        .map(CountingChatEndpoint.Arrival::key)
                                        .distinct()
                                        .count()
                                == WORKERS);
                long from = System.nanoTime();
                long to = from + TimeUnit.SECONDS.toNanos(WINDOW_SECONDS);
                await("the window ends", WINDOW_SECONDS + 30, () -> System.nanoTime() > to);
                Map<String, Integer> byKey = endpoint.countByKey(from, to);
                int total = byKey.values().stream().mapToInt(Integer::intValue).sum();
                double expected = RPM * WINDOW_SECONDS / 60.0;
                assertThat(total)
                        .as(
                                "requests in %d s under %d/min, by key %s, per second %s",
                                WINDOW_SECONDS, RPM, byKey, endpoint.perSecond(from, to))
                        .isBetween((int) Math.floor(expected * 0.9), (int) Math.ceil(expected * 1.1));
                assertThat(byKey).as("every worker sent within the window").hasSize(WORKERS);

                JsonNode before = limiter(cli, run);
                assertThat(before.get("requests_per_minute").asInt()).isEqualTo(RPM);
                assertThat(before.get("circuit").asText()).isEqualTo("closed");

                // A 429 storm: the fleet's rate is lowered, for every worker, and status says why.
                endpoint.storm(true);
                await("429s answered", 60, () -> endpoint.rateLimited() >= 20);
                endpoint.storm(false);
                long stormEnd = System.nanoTime();
                JsonNode lowered = awaitLimiter(
                        cli, run, l -> l.get("rate_reason").asText().startsWith("429"));
                assertThat(lowered.get("current_requests_per_minute").asInt()).isLessThanOrEqualTo(RPM / 2);
                assertThat(lowered.get("rate_factor").asDouble()).isLessThanOrEqualTo(0.5);
                // The text at once (in-process: healthy answers raise the rate again 10 s after the last decrease).
                CliRunner.Result text = cli.run("run", "status", run);
                assertThat(text.out())
                        .contains("limiter agent (" + endpoint.chatUrl() + " model m key $FLEET_KEY): ")
                        .contains(" of " + RPM + " requests/min since ")
                        .contains("429 Too Many Requests")
                        .contains("circuit closed")
                        .doesNotContain("key-1");
                long afterFrom = stormEnd + TimeUnit.SECONDS.toNanos(2);
                long afterTo = afterFrom + TimeUnit.SECONDS.toNanos(6);
                await("six seconds after the storm", 30, () -> System.nanoTime() > afterTo);
                int after = endpoint.countByKey(afterFrom, afterTo).values().stream()
                        .mapToInt(Integer::intValue)
                        .sum();
                // At most half the rate for 6 s (plus a burst), where the configured rate would send 60.
                assertThat(after)
                        .as(
                                "requests in the 6 s after the storm, per second %s",
                                endpoint.perSecond(afterFrom, afterTo))
                        .isLessThanOrEqualTo((int) (RPM / 2 / 60.0 * 6 * 1.1) + RPM / 60);
                // Healthy answers raise it again.
                awaitLimiter(cli, run, l -> l.get("rate_reason").asText().startsWith("answers healthy"));
            } finally {
                stopWorkers();
            }
        }
    }

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void aDeadEndpointOpensTheCircuitWithoutErroringACaseAndTheRunSettlesOnceItIsBack() throws Exception {
        String db = TestPostgres.newDatabaseUrl();
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", db));
        int cases = 40;
        try (CountingChatEndpoint endpoint = new CountingChatEndpoint()) {
            endpoint.down();
            String run = createRun(cli, cases, """
                    name: fleet-breaker
                    agent:
                      kind: http
                      url: "%s"
                      model: m
                      api_key_env: FLEET_KEY
                      timeout_seconds: 10
                      connect_timeout_seconds: 2
                      circuit_breaker: {failures: 2, cool_down_seconds: 2}
                    evaluators: [{name: exact, kind: exact_match}]
                    gates: [{name: all, required_evaluators: [exact], min_pass_rate: 1.0}]
                    """.formatted(endpoint.chatUrl()));
            try {
                startWorker(db, "key-1", "4", "--exit-when-idle");
                startWorker(db, "key-2", "4", "--exit-when-idle");
                JsonNode open =
                        awaitLimiter(cli, run, l -> l.get("circuit").asText().equals("open"));
                assertThat(open.get("circuit_reason").asText())
                        .contains("connection failures or 5xx in a row (last: connection refused or failed)");
                VigiloProcess.Result text =
                        VigiloProcess.run(home, Map.of(), List.of(), 120, "--control-db", db, "run", "status", run);
                assertThat(text.out()).containsPattern("circuit open since \\S+Z: ");
                // A few cool-downs pass with the endpoint still away: probes fail, cases keep waiting.
                await("a failed probe reopened the circuit", 60, () -> {
                    JsonNode l = limiterOrNull(cli, run);
                    return l != null && l.get("circuit_reason").asText().startsWith("the half-open probe failed");
                });
                endpoint.up();
                for (Process w : workers) {
                    assertThat(w.waitFor(4, TimeUnit.MINUTES))
                            .as("worker exits once the run is settled")
                            .isTrue();
                    assertThat(w.exitValue()).isZero();
                }
                JsonNode status =
                        JSON.readTree(cli.run("run", "status", run, "--json").out());
                assertThat(status.get("status").asText()).isEqualTo("settled");
                JsonNode gate = status.get("gates").get(0);
                assertThat(gate.get("passed").asInt())
                        .as("every case answered: %s", status)
                        .isEqualTo(cases);
                assertThat(gate.get("errored").asInt()).isZero();
                assertThat(status.get("limiters").get(0).get("circuit").asText())
                        .isEqualTo("closed");
            } finally {
                stopWorkers();
            }
        }
    }

    private String createRun(CliRunner cli, int cases, String profile) throws Exception {
        StringBuilder lines = new StringBuilder();
        for (int n = 0; n < cases; n++) {
            lines.append("{\"id\":\"c-")
                    .append(n)
                    .append("\",\"input\":\"q ")
                    .append(n)
                    .append("\",\"expected\":\"a ")
                    .append(n)
                    .append("\"}\n");
        }
        Path file = Files.writeString(home.resolve("cases.jsonl"), lines);
        CliRunner.Result up = cli.run("dataset", "upload", file.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        String run = UUID.randomUUID().toString();
        CliRunner.Result created = cli.run(
                "run",
                "create",
                "--profile",
                profile,
                "--dataset-upload-id",
                up.out().trim(),
                "--run-id",
                run);
        assertThat(created.exitCode()).as(created.err()).isZero();
        return run;
    }

    private void startWorker(String db, String key, String concurrency, String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of("--control-db", db, "worker", "--concurrency", concurrency));
        args.addAll(List.of(more));
        Path err = home.resolve("worker-" + key + ".err");
        workers.add(
                VigiloProcess.builder(home, Map.of("FLEET_KEY", key), List.of("-Xmx256m"), args.toArray(String[]::new))
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .redirectError(err.toFile())
                        .start());
    }

    private void stopWorkers() throws InterruptedException {
        for (Process w : workers) {
            w.destroy();
        }
        for (Process w : workers) {
            if (!w.waitFor(60, TimeUnit.SECONDS)) {
                w.destroyForcibly();
            }
        }
    }

    /** The run's one limiter in {@code run status --json}. */
    private static JsonNode limiter(CliRunner cli, String run) {
        JsonNode l = limiterOrNull(cli, run);
        assertThat(l).as("the run's limiter in status").isNotNull();
        return l;
    }

    private static JsonNode limiterOrNull(CliRunner cli, String run) {
        CliRunner.Result r = cli.run("run", "status", run, "--json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonNode limiters;
        try {
            limiters = JSON.readTree(r.out()).get("limiters");
        } catch (java.io.IOException e) {
            throw new AssertionError("run status --json printed no JSON: " + r.out(), e);
        }
        return limiters == null || limiters.isEmpty() ? null : limiters.get(0);
    }

    private JsonNode awaitLimiter(CliRunner cli, String run, java.util.function.Predicate<JsonNode> done)
            throws InterruptedException {
        JsonNode[] seen = new JsonNode[1];
        await("the run's limiter in status: " + done, 120, () -> {
            seen[0] = limiterOrNull(cli, run);
            return seen[0] != null && done.test(seen[0]);
        });
        return seen[0];
    }

    /** Polls {@code condition} until true, failing after {@code seconds} or when a worker died. */
    private void await(String what, long seconds, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            for (Process w : workers) {
                assertThat(w.isAlive() || w.exitValue() == 0)
                        .as("worker alive while waiting for: " + what)
                        .isTrue();
            }
            assertThat(System.nanoTime() - deadline)
                    .as("waited %d s for: %s", seconds, what)
                    .isNegative();
            Thread.sleep(100);
        }
    }
}
