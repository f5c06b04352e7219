package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.storage.StorageConfig;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control database stops under a running dashboard: pages, the API and {@code /metrics} answer 503 with one line
 * that names no Java class (a small page, the API's JSON error, plain text), and 200 again once the database is back.
 */
class DatabaseOutageTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Pattern MESSAGE =
            Pattern.compile("<p class=\"error-message\" id=\"error-message\">([^<]*)</p>");
    private static final Duration BACK = Duration.ofSeconds(60);

    @TempDir
    Path home;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aStoppedDatabaseIs503WithOneLineAndTheDashboardRecoversWhenItIsBack() throws Exception {
        try (TestPostgres.PrivateServer server = TestPostgres.startPrivateServer();
                ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(server.newDatabaseUrl()));
                Placements placements = Placements.open(control, ExecutionConfig.defaults());
                Dashboard dashboard = Dashboard.start(
                        new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                        DashboardSources.all(
                                control.jdbi(),
                                placements,
                                StorageConfig.localDefault(home.resolve("objects")),
                                Optional.empty(),
                                List.of(),
                                List.of(home)))) {
            String base = "http://127.0.0.1:" + dashboard.port();
            assertThat(Http.get(base + "/runs").statusCode()).isEqualTo(200);
            assertThat(Http.get(base + "/api/runs").statusCode()).isEqualTo(200);

            server.stop();

            HttpResponse<String> page = Http.get(base + "/runs");
            assertThat(page.statusCode()).as(page.body()).isEqualTo(503);
            assertThat(page.headers().firstValue("Content-Type").orElse("")).startsWith("text/html");
            Matcher m = MESSAGE.matcher(page.body());
            assertThat(m.find()).as(page.body()).isTrue();
            assertOneLineWithoutClassNames(m.group(1));

            HttpResponse<String> api = Http.get(base + "/api/runs");
            assertThat(api.statusCode()).as(api.body()).isEqualTo(503);
            assertThat(api.headers().firstValue("Content-Type").orElse("")).startsWith("application/json");
            JsonNode error = MAPPER.readTree(api.body());
            assertThat(error.path("status").asInt()).isEqualTo(503);
            assertOneLineWithoutClassNames(error.path("error").asText());

            // The first scrape of this server reads the databases, so it meets the outage.
            HttpResponse<String> metrics = Http.get(base + "/metrics");
            assertThat(metrics.statusCode()).as(metrics.body()).isEqualTo(503);
            assertThat(metrics.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
            assertThat(metrics.body()).endsWith("\n");
            assertOneLineWithoutClassNames(
                    metrics.body().substring(0, metrics.body().length() - 1));

            server.restart();

            awaitOk(base + "/api/runs");
            assertThat(Http.get(base + "/runs").statusCode()).isEqualTo(200);
            HttpResponse<String> back = Http.get(base + "/metrics");
            assertThat(back.statusCode()).as(back.body()).isEqualTo(200);
            assertThat(back.body()).contains("vigilo_execution_databases_unreachable 0.0");
        }
    }

    private static void assertOneLineWithoutClassNames(String message) {
        assertThat(message)
                .isNotBlank()
                .doesNotContain("\n", "org.", "java.", "Exception", "jdbi", "Hikari", "a bug")
                .contains("database")
                .contains("unavailable");
    }

    /** Polls until {@code url} answers 200 (the pool reconnects on the next request after the server is back). */
    private static void awaitOk(String url) throws InterruptedException {
        long deadline = System.nanoTime() + BACK.toNanos();
        while (true) {
            HttpResponse<String> r = Http.get(url);
            if (r.statusCode() == 200) {
                return;
            }
            assertThat(System.nanoTime() - deadline)
                    .as("%s still answers %d after the database is back: %s", url, r.statusCode(), r.body())
                    .isNegative();
            Thread.sleep(100);
        }
    }
}
