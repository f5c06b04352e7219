package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Human review on the dashboard over HTTP (docs/web.md, "Human review"), on a run executed by a real worker (a command
 * agent wrong on two of six cases) behind an access token: the review API refuses a request without the token (401)
 * and a cross-site form (403) as cancel does, records overrides with it, refuses bad input (400) writing nothing;
 * the case page shows the history (escaped), the run page the reviewed gate table beside the machine one, the
 * overrides API the recomputed figures, and the CSV download the override.
 */
class ReviewPagesTest {
    private static final String TOKEN = "review-test-token-0123456789abcdef";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    ControlDatabase control;
    Placements placements;
    ObjectStore store;
    Dashboard dashboard;

    @AfterEach
    void stop() {
        if (dashboard != null) {
            dashboard.close();
        }
        if (store != null) {
            store.close();
        }
        if (placements != null) {
            placements.close();
        }
        if (control != null) {
            control.close();
        }
    }

    private static String form(String outcome, String reviewer, String note) {
        return "outcome=" + enc(outcome) + "&reviewer=" + enc(reviewer) + "&note=" + enc(note);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private long rows() {
        return control.jdbi()
                .withHandle(h -> h.createQuery("SELECT count(*) FROM run_review_overrides")
                        .mapTo(Long.class)
                        .one());
    }

    @Test
    void reviewersOverrideThroughTheApiAndThePagesShowTheReviewedFigures() throws IOException {
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
        placements = Placements.open(control, ExecutionConfig.defaults());
        StorageConfig storage = StorageConfig.localDefault(home.resolve("objects"));
        store = ObjectStores.open(storage.defaultStore());
        UUID run = ReviewRun.execute(home, control, placements, storage, store);

        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.of(TOKEN)),
                DashboardSources.all(control.jdbi(), placements, storage, Optional.empty(), List.of(), List.of(home)));
        String base = "http://127.0.0.1:" + dashboard.port();
        String api = base + "/api/runs/" + run + "/cases/2/review";

        // The same access rules as cancel: no token 401; a form with the token's cookie but from another site 403.
        assertThat(Http.post(api, form("pass", "alice", "fine")).statusCode()).isEqualTo(401);
        String cookie = Http.get(base + "/runs?token=" + TOKEN)
                .headers()
                .firstValue("set-cookie")
                .orElseThrow();
        assertThat(Http.post(
                                base + "/runs/" + run + "/cases/2/review",
                                form("pass", "alice", "fine") + "&csrf=forged",
                                "Cookie",
                                cookie.split(";")[0],
                                "Origin",
                                "http://attacker.example")
                        .statusCode())
                .isEqualTo(403);
        assertThat(rows()).isZero();

        // Bad input: 400, one line, nothing written.
        HttpResponse<String> bad = Http.post(api, form("maybe", "alice", "fine"), AccessGuard.HEADER, TOKEN);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(bad.body()).path("error").asText()).contains("use pass or fail");
        assertThat(Http.post(api, form("pass", "", "fine"), AccessGuard.HEADER, TOKEN)
                        .statusCode())
                .isEqualTo(400);
        assertThat(Http.post(api, form("pass", "alice", " "), AccessGuard.HEADER, TOKEN)
                        .statusCode())
                .isEqualTo(400);
        assertThat(Http.post(
                                base + "/api/runs/" + run + "/cases/99/review",
                                form("pass", "alice", "fine"),
                                AccessGuard.HEADER,
                                TOKEN)
                        .statusCode())
                .isEqualTo(400);
        assertThat(rows()).isZero();

        // Case 2 failed on the machine; a reviewer passes it.
        HttpResponse<String> ok =
                Http.post(api, form("pass", "<b>alice</b>", "right in substance"), AccessGuard.HEADER, TOKEN);
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        JsonNode o = JSON.readTree(ok.body());
        assertThat(o.path("original").asText()).isEqualTo("failed");
        assertThat(o.path("outcome").asText()).isEqualTo("pass");
        assertThat(o.path("seq").asLong()).isEqualTo(1);
        assertThat(rows()).isEqualTo(1);
        // The same outcome again is a conflict.
        assertThat(Http.post(api, form("pass", "bob", "agree"), AccessGuard.HEADER, TOKEN)
                        .statusCode())
                .isEqualTo(409);

        // 4 of 6 passed on the machine (min 0.8: failed); reviewed 5 of 6 (83.3%: passed).
        JsonNode reviews = JSON.readTree(Http.get(base + "/api/runs/" + run + "/reviews", AccessGuard.HEADER, TOKEN)
                .body());
        assertThat(reviews.path("overrides")).hasSize(1);
        assertThat(reviews.at("/reviewed/gates/0/passed").asLong()).isEqualTo(5);
        assertThat(reviews.at("/reviewed/gates/0/decision").asText()).isEqualTo("passed");
        assertThat(reviews.at("/reviewed/verdict").asText()).isEqualTo("passed");

        String runPage =
                Http.get(base + "/runs/" + run, AccessGuard.HEADER, TOKEN).body();
        assertThat(runPage)
                .contains("id=\"reviewed-gates\"")
                .contains("83.3% (66.7%)")
                .contains("id=\"reviewed-verdict\">passed")
                .contains("id=\"run-verdict\">verdict: failed");

        String casePage = Http.get(base + "/runs/" + run + "/cases/2", AccessGuard.HEADER, TOKEN)
                .body();
        assertThat(casePage)
                .contains("id=\"review-form\"")
                .contains("id=\"review-history\"")
                .contains("&lt;b&gt;alice&lt;/b&gt;")
                .doesNotContain("<b>alice</b>")
                .contains("right in substance");

        String csv = Http.get(base + "/runs/" + run + "/results.csv", AccessGuard.HEADER, TOKEN)
                .body();
        assertThat(csv.lines().findFirst().orElseThrow()).endsWith(",override");
        assertThat(csv.lines().filter(l -> l.startsWith("c2,")).findFirst().orElseThrow())
                .contains("\"\"outcome\"\":\"\"pass\"\"")
                .contains("right in substance");
    }
}
