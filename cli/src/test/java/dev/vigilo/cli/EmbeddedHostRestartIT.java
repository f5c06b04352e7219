package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.process.ProcessRef;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
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
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded PostgreSQL's host and its server are killed with SIGKILL under a real {@code vigilo worker} that is
 * mid-run (its agents block until the test releases them) and a real {@code vigilo serve}, and no other command runs
 * afterwards: the long-running processes relaunch the host themselves, the dashboard answers 200 again, and once the
 * agents are released the run settles with every case counted and {@code vigilo verify} finds it intact.
 */
class EmbeddedHostRestartIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int CASES = 250;
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final Pattern LISTENING = Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+);");
    /** The embedded server stops soon after the last command, so the test leaves no server behind. */
    private static final List<String> JVM = List.of("-Dvigilo.control.embedded.idle-grace=500");

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path home;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aKilledHostIsRelaunchedByTheRunningWorkerAndDashboardAndTheRunSettlesIntact() throws Exception {
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < CASES; i++) {
            cases.append("{\"id\":\"h").append(i).append("\",\"input\":\"q\",\"expected\":\"ok\"}\n");
        }
        Path file = Files.writeString(home.resolve("cases.jsonl"), cases);
        VigiloProcess.Result up = VigiloProcess.run(home, Map.of(), JVM, 180, "dataset", "upload", file.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        // Every case's agent says it started, then waits until the test releases it.
        Path started = home.resolve("started");
        Path release = home.resolve("release");
        Path agent = Files.writeString(
                home.resolve("agent.sh"),
                "cat >/dev/null\ntouch '" + started + "'\nwhile [ ! -e '" + release + "' ]; do sleep 0.05; done\n"
                        + "echo ok\n");
        String profile = """
                name: host-restart
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 600}
                evaluators: [{name: exact, kind: exact_match}]
                gates: [{name: all, required_evaluators: [exact], min_pass_rate: 1.0}]
                """.formatted(agent);
        String run = UUID.randomUUID().toString();
        VigiloProcess.Result created = VigiloProcess.run(
                home,
                Map.of(),
                JVM,
                180,
                "run",
                "create",
                "--profile",
                profile,
                "--dataset-upload-id",
                up.out().trim(),
                "--run-id",
                run);
        assertThat(created.exitCode()).as(created.err()).isZero();

        Path workerErr = home.resolve("worker.err");
        Path serveOut = home.resolve("serve.out");
        Process worker = VigiloProcess.builder(home, Map.of(), JVM, "worker", "--concurrency", "2")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(workerErr.toFile())
                .start();
        Process serve = VigiloProcess.builder(home, Map.of(), JVM, "serve", "--port", "0")
                .redirectOutput(serveOut.toFile())
                .redirectErrorStream(true)
                .start();
        try {
            String base = "http://127.0.0.1:" + await("the dashboard's address", () -> port(serveOut), serve, serveOut);
            await(
                    "an agent of the worker to start",
                    () -> Optional.of(started).filter(Files::exists),
                    worker,
                    workerErr);
            assertThat(get(base + "/api/runs/" + run).statusCode()).isEqualTo(200);

            // The host and its PostgreSQL die; nothing but the worker and the dashboard is running.
            Properties dead = serverState().orElseThrow();
            long host = Long.parseLong(dead.getProperty("hostPid"));
            long postmaster = Long.parseLong(dead.getProperty("postmasterPid"));
            ProcessHandle.of(host).ifPresent(ProcessHandle::destroyForcibly);
            ProcessHandle.of(postmaster).ifPresent(ProcessHandle::destroyForcibly);
            await(
                    "the killed host and postmaster to be gone",
                    () -> ProcessRef.isRunning(host) || ProcessRef.isRunning(postmaster)
                            ? Optional.empty()
                            : Optional.of(true),
                    worker,
                    workerErr);

            Properties relaunched = await(
                    "a relaunched host",
                    () -> serverState()
                            .filter(s -> Long.parseLong(s.getProperty("hostPid")) != host)
                            .filter(s -> new ProcessRef(
                                            Long.parseLong(s.getProperty("hostPid")),
                                            Long.parseLong(s.getProperty("hostStart")))
                                    .isAlive()),
                    worker,
                    workerErr);
            assertThat(relaunched.getProperty("port")).isEqualTo(dead.getProperty("port"));
            await(
                    "the dashboard to answer 200 again",
                    () -> Optional.of(get(base + "/api/runs/" + run)).filter(r -> r.statusCode() == 200),
                    serve,
                    serveOut);
            assertThat(get(base + "/runs/" + run).statusCode()).isEqualTo(200);

            Files.writeString(release, "");
            JsonNode settled = await(
                    "the run to settle",
                    () -> Optional.of(get(base + "/api/runs/" + run))
                            .filter(r -> r.statusCode() == 200)
                            .map(r -> readTree(r.body()))
                            .filter(j -> j.path("status").asText().equals("settled")),
                    worker,
                    workerErr);
            assertThat(settled.path("verdict").asText()).isEqualTo("passed");
            assertThat(settled.at("/gates/0/planned").asLong()).isEqualTo(CASES);
            assertThat(settled.at("/gates/0/passed").asLong()).isEqualTo(CASES);
            assertThat(Files.readString(workerErr)).contains("is gone; restarting it");
        } finally {
            worker.destroy();
            serve.destroy();
            assertThat(worker.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(serve.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }

        VigiloProcess.Result verified = VigiloProcess.run(home, Map.of(), JVM, 180, "verify", run);
        assertThat(verified.exitCode()).as(verified.out() + verified.err()).isZero();
        assertThat(verified.out()).contains("intact");
        // No command left: the relaunched server stops by itself.
        await(
                "the embedded server to stop",
                () -> serverState().isPresent() ? Optional.empty() : Optional.of(true),
                null,
                null);
    }

    private Optional<Properties> serverState() {
        Path file = home.resolve("postgres/server.properties");
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
            return p.getProperty("hostPid") == null ? Optional.empty() : Optional.of(p);
        } catch (java.nio.file.NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Optional<Integer> port(Path serveOut) {
        try {
            Matcher m = LISTENING.matcher(Files.readString(serveOut));
            return m.find() ? Optional.of(Integer.parseInt(m.group(1))) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private HttpResponse<String> get(String url) {
        try {
            return http.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .timeout(Duration.ofSeconds(30))
                            .build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static JsonNode readTree(String body) {
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Polls {@code condition} until it has a value, for at most {@link #WAIT}; fails early when {@code process} (if
     * any) exits, with its output.
     */
    private static <T> T await(String what, Supplier<Optional<T>> condition, Process process, Path output)
            throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            Optional<T> value = condition.get();
            if (value.isPresent()) {
                return value.get();
            }
            String log = output == null ? "" : Files.readString(output);
            assertThat(process == null || process.isAlive())
                    .as("waiting for %s, the process exited: %s", what, log)
                    .isTrue();
            assertThat(System.nanoTime() - deadline)
                    .as("waited %s for %s; %s", WAIT, what, log)
                    .isNegative();
            Thread.sleep(100);
        }
    }
}
