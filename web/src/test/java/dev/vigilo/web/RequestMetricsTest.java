package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code vigilo_http_server_requests_seconds} labels each answer with the route template it matched. */
class RequestMetricsTest {
    private static final Pattern ROUTE =
            Pattern.compile("^vigilo_http_server_requests_seconds_count\\{[^}]*route=\"([^\"]*)\"", Pattern.MULTILINE);

    @TempDir
    Path dir;

    @Test
    void requestsAreTimedByTheirRouteTemplateAndUnknownPathsShareOneLabel() throws IOException {
        Path log = Files.writeString(dir.resolve("given.jsonl"), "not a session log\n");
        try (Dashboard dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                DashboardSources.transcripts(List.of(log)))) {
            String base = "http://127.0.0.1:" + dashboard.port();
            assertThat(Http.get(base + "/sessions").statusCode()).isEqualTo(200);
            Http.get(base + "/api/sessions/view?path=" + log);
            for (String pipeline : List.of("p1", "p2", "p3")) {
                Http.get(base + "/api/datagen/" + pipeline + "/e1");
            }
            assertThat(Http.get(base + "/static/dashboard.css").statusCode()).isEqualTo(200);
            for (int i = 0; i < 20; i++) {
                assertThat(Http.get(base + "/no/such/page/" + i).statusCode()).isEqualTo(404);
            }
            Http.get(base + "/metrics");
            String metrics = Http.get(base + "/metrics").body();
            Set<String> routes = new TreeSet<>();
            Matcher m = ROUTE.matcher(metrics);
            while (m.find()) {
                routes.add(m.group(1));
            }
            assertThat(routes)
                    .as(metrics)
                    .contains(
                            "/sessions",
                            "/api/sessions/view",
                            "/api/datagen/{pipeline}/{experiment}",
                            "/metrics",
                            "static",
                            "unmatched")
                    .doesNotContain("*")
                    .noneMatch(r -> r.contains("p1") || r.contains("/no/such"));
            // Twenty unknown paths, one series.
            assertThat(metrics)
                    .containsPattern("vigilo_http_server_requests_seconds_count\\{method=\"GET\",route=\"unmatched\","
                            + "status=\"404\"} 20");
        }
    }
}
