package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.sessionlog.LockFileEpochSource;
import dev.vigilo.sessionlog.SessionHeader;
import dev.vigilo.sessionlog.SessionLogWriter;
import dev.vigilo.sessionlog.WriterOptions;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code vigilo serve} and {@code vigilo session view}: bad input, then a real server until interrupted. */
class ServeCliTest {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();

    @TempDir
    Path home;

    /** A command running on its own thread, its output readable while it runs. */
    private static final class Running {
        final StringWriter out = new StringWriter();
        final StringWriter err = new StringWriter();
        final AtomicInteger exit = new AtomicInteger(-1);
        final Thread thread;

        Running(Environment env, String... args) {
            thread = new Thread(
                    () -> exit.set(Cli.run(env, new PrintWriter(out, true), new PrintWriter(err, true), args)));
            thread.start();
        }

        /** Waits for {@code pattern} in the output and returns its first group. */
        String await(Pattern pattern) throws InterruptedException {
            long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (System.nanoTime() < deadline) {
                Matcher m = pattern.matcher(out.toString());
                if (m.find()) {
                    return m.group(1);
                }
                if (!thread.isAlive()) {
                    throw new AssertionError("the command ended (" + exit.get() + "): " + out + err);
                }
                Thread.sleep(100);
            }
            throw new AssertionError("no " + pattern + " in: " + out + err);
        }

        int stop() throws InterruptedException {
            thread.interrupt();
            thread.join(30_000);
            assertThat(thread.isAlive()).isFalse();
            return exit.get();
        }
    }

    private static HttpResponse<String> get(String url, String... headers) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private Environment env() {
        return new Environment(Map.of(Environment.HOME_VARIABLE, home.toString()), home);
    }

    @Test
    void badInputIsRefusedBeforeAnythingListens() {
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        CliRunner.Result port = cli.run("serve", "--port", "70000");
        assertThat(port.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(port.err()).contains("--port 70000 is out of range");
        CliRunner.Result token = cli.run("serve", "--port", "0", "--token", "short");
        assertThat(token.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(token.err()).contains("access token must be").doesNotContain("short");
        CliRunner.Result bind = cli.run("serve", "--port", "0", "--bind", "not an address!");
        assertThat(bind.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(bind.err()).contains("--bind");
        CliRunner.Result missing =
                cli.run("session", "view", home.resolve("nope.jsonl.zstd").toString());
        assertThat(missing.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(missing.err()).contains("no such session log file");
        assertThat(cli.run("serve", "--port", "abc").exitCode()).isEqualTo(ExitCode.USAGE);
    }

    @Test
    void serveOnAnotherAddressPrintsItsTokenAndRequiresIt() throws Exception {
        Running serve = new Running(
                env(), "--control-db", TestPostgres.newDatabaseUrl(), "serve", "--port", "0", "--bind", "0.0.0.0");
        String url = serve.await(Pattern.compile("Vigilo dashboard: (\\S+)"));
        String token = serve.await(Pattern.compile("access token: (\\S+)"));
        String base = url.substring(0, url.indexOf('/', "http://".length()));
        assertThat(get(base + "/api/runs").statusCode()).isEqualTo(401);
        HttpResponse<String> runs = get(base + "/api/runs", "Authorization", "Bearer " + token);
        assertThat(runs.statusCode()).isEqualTo(200);
        assertThat(runs.body()).contains("\"runs\":[]");
        assertThat(get(url).statusCode()).isEqualTo(303);
        assertThat(serve.stop()).isEqualTo(ExitCode.OK);
        assertThat(serve.out.toString()).contains("stopped");
    }

    @Test
    void sessionViewServesOneLogAndNothingElse() throws Exception {
        Path log = home.resolve("s/session.jsonl.zstd");
        Files.createDirectories(log.getParent());
        try (SessionLogWriter w = SessionLogWriter.create(
                log,
                new SessionHeader("cli-view", "/tmp", 1_760_000_000_000L, 0),
                new LockFileEpochSource(),
                WriterOptions.defaults())) {
            ObjectNode e = JsonNodeFactory.instance.objectNode().put("type", "turn/start");
            e.putObject("data").put("turn", 1);
            w.append(List.of(e));
        }
        Running view = new Running(env(), "session", "view", log.toString(), "--port", "0");
        String url = view.await(Pattern.compile("Transcript viewer: (\\S+)"));
        HttpResponse<String> page = get(url);
        assertThat(page.statusCode()).isEqualTo(200);
        // A log of one turn marker: nothing of the conversation to draw, the event listed under storage.
        assertThat(page.body())
                .contains("ACCEPT")
                .contains("1 event")
                .contains("Nothing of the conversation on this page")
                .contains("turn/start");
        String base = url.substring(0, url.indexOf('/', "http://".length()));
        assertThat(get(base + "/runs").statusCode()).isEqualTo(404);
        assertThat(get(base + "/sessions/view?path=%2Fetc%2Fpasswd").statusCode())
                .isEqualTo(403);
        assertThat(view.stop()).isEqualTo(ExitCode.OK);
    }
}
