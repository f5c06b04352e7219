package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo worker --metrics-port}, a real worker process: {@code /healthz} answers while it lives, {@code
 * /readyz} while it can reach its control database (503 once that database is down), {@code /metrics} counts the
 * chunks it executes; a non-loopback bind without a token is refused before anything starts.
 */
class WorkerMetricsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern ADDRESS = Pattern.compile("worker metrics on (http://\\S+)/metrics");
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @TempDir
    Path home;

    @Test
    void aWorkerServesItsMetricsAndProbes() throws Exception {
        try (TestPostgres.PrivateServer server = TestPostgres.startPrivateServer()) {
            String db = server.newDatabaseUrl();
            CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", db));
            Path file = Files.writeString(
                    home.resolve("cases.jsonl"),
                    "{\"id\":\"a\",\"input\":\"q\",\"expected\":\"ok\"}\n{\"id\":\"b\",\"input\":\"q\",\"expected\":\"ok\"}\n");
            CliRunner.Result up = cli.run("dataset", "upload", file.toString());
            assertThat(up.exitCode()).as(up.err()).isZero();
            String runId = UUID.randomUUID().toString();
            CliRunner.Result created = cli.run(
                    "run",
                    "create",
                    "--profile",
                    """
                    name: metrics
                    agent: {kind: command, command: [sh, -c, "cat >/dev/null; echo ok"], max_attempts: 1}
                    evaluators: [{name: exact, kind: exact_match}]
                    gates: [{name: all, required_evaluators: [exact], min_pass_rate: 1.0}]
                    """,
                    "--dataset-upload-id",
                    up.out().trim(),
                    "--run-id",
                    runId);
            assertThat(created.exitCode()).as(created.err()).isZero();

            Path err = home.resolve("worker.err");
            Process worker = VigiloProcess.builder(
                            home, Map.of(), List.of(), "--control-db", db, "worker", "--metrics-port", "0")
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(err.toFile())
                    .start();
            try {
                String base = awaitAddress(worker, err);
                HttpResponse<String> healthy = get(base + "/healthz");
                assertThat(healthy.statusCode()).isEqualTo(200);
                assertThat(healthy.body()).isEqualTo("ok\n");
                HttpResponse<String> ready = awaitResponse(base + "/readyz", r -> r.statusCode() == 200, worker);
                assertThat(ready.body()).isEqualTo("ready\n");
                // The worker executes the run's one chunk, then settles the run (its last event), and counts both.
                HttpResponse<String> metrics = awaitResponse(
                        base + "/metrics",
                        r -> r.body().contains("vigilo_worker_runs_settled_total{status=\"settled\"} 1.0"),
                        worker);
                assertThat(metrics.statusCode()).isEqualTo(200);
                assertThat(metrics.headers().firstValue("Content-Type"))
                        .hasValueSatisfying(t -> assertThat(t).startsWith("text/plain; version=0.0.4"));
                assertThat(metrics.body())
                        .contains("vigilo_worker_chunks_claimed_total 1.0")
                        .contains("vigilo_worker_cases_executed_total{status=\"ok\"} 2.0")
                        .contains("vigilo_worker_chunks_completed_total 1.0")
                        .contains("jvm_memory_used_bytes");
                JsonNode status =
                        JSON.readTree(cli.run("run", "status", runId, "--json").out());
                assertThat(status.get("status").asText()).isEqualTo("settled");

                // Its control database goes away: still alive, no longer ready.
                server.stop();
                HttpResponse<String> down = awaitResponse(base + "/readyz", r -> r.statusCode() == 503, worker);
                assertThat(down.body()).startsWith("not ready: the control database");
                assertThat(get(base + "/healthz").statusCode()).isEqualTo(200);
                server.restart();
                awaitResponse(base + "/readyz", r -> r.statusCode() == 200, worker);

                worker.destroy(); // SIGTERM: stops gracefully
                assertThat(worker.waitFor(60, TimeUnit.SECONDS)).isTrue();
                assertThat(worker.exitValue())
                        .as(Files.readString(err, StandardCharsets.UTF_8))
                        .isEqualTo(ExitCode.INTERRUPTED);
            } finally {
                worker.destroyForcibly();
            }
        }
    }

    @Test
    void aMetricsBindBeyondLoopbackNeedsTheTokenVariable() {
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        CliRunner.Result refused = cli.run("worker", "--metrics-port", "0", "--metrics-bind", "0.0.0.0");
        assertThat(refused.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(refused.err())
                .contains("--metrics-bind 0.0.0.0 is not a loopback address")
                .contains(WorkerCommand.METRICS_TOKEN_VARIABLE);
        CliRunner.Result badPort = cli.run("worker", "--metrics-port", "70000");
        assertThat(badPort.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(badPort.err()).contains("--metrics-port 70000 is out of range");
        CliRunner.Result badBind = cli.run("worker", "--metrics-port", "0", "--metrics-bind", "localhost");
        assertThat(badBind.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(badBind.err()).contains("--metrics-bind \"localhost\" is not an IP address");
    }

    /** The metrics address the worker prints to stderr (bounded wait; fails at once if the worker exits). */
    private static String awaitAddress(Process worker, Path err) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            String text = Files.exists(err) ? Files.readString(err, StandardCharsets.UTF_8) : "";
            Matcher m = ADDRESS.matcher(text);
            if (m.find()) {
                return m.group(1);
            }
            assertThat(worker.isAlive()).as("worker alive; stderr: %s", text).isTrue();
            assertThat(System.nanoTime() - deadline)
                    .as("metrics address printed; stderr: %s", text)
                    .isNegative();
            Thread.sleep(50);
        }
    }

    /** Polls {@code url} (bounded) until its response satisfies {@code done}, and returns that response. */
    private static HttpResponse<String> awaitResponse(String url, Predicate<HttpResponse<String>> done, Process worker)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            HttpResponse<String> r = get(url);
            if (done.test(r)) {
                return r;
            }
            assertThat(worker.isAlive()).as("worker alive").isTrue();
            assertThat(System.nanoTime() - deadline)
                    .as("%s answered as expected; last: %d %s", url, r.statusCode(), r.body())
                    .isNegative();
            Thread.sleep(100);
        }
    }

    private static HttpResponse<String> get(String url) throws Exception {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(30))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
