package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The live run API (docs/web.md, "Live runs") over HTTP while a real worker executes {@link LiveRun}: before a worker,
 * {@code live.no_worker} and the installation's worker command; after the first chunk (the second one held), the gate
 * counts, the pass rate over executed (75%) beside the one over planned (37.5%), a smoothed throughput above 0, an ETA,
 * the leasing worker, and the throughput's smoothed series; once settled, no live figures.
 */
class LiveRunApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String COMMAND = "./vigilo worker --exit-when-idle --execution-config /etc/vigilo/x.toml";

    @TempDir
    Path home;

    Dashboard dashboard;
    LiveRun live;

    @AfterEach
    void stop() throws Exception {
        if (live != null) {
            live.close();
        }
        if (dashboard != null) {
            dashboard.close();
        }
    }

    @Test
    void theApiFollowsARunningRunAndSaysWhenNoWorkerWorksOnIt() throws Exception {
        live = new LiveRun(home);
        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                live.sources().withWorkerCommand(COMMAND));
        String api = "http://127.0.0.1:" + dashboard.port() + "/api/runs/" + live.run;

        JsonNode pending = get(api);
        assertThat(pending.path("status").asText()).isEqualTo("pending");
        assertThat(pending.path("live").path("no_worker").asBoolean()).isTrue();
        assertThat(pending.path("live").path("worker_command").asText()).isEqualTo(COMMAND);
        assertThat(pending.path("live").path("workers_leasing").asLong()).isZero();
        assertThat(pending.path("live").path("eta_seconds").isNull()).isTrue();
        assertThat(pending.path("gates").get(0).path("executed_pass_rate").isNull())
                .isTrue();

        live.startWorker();
        // The first chunk done, the second held by its waiting case: the run is running with 100 of 200 executed.
        JsonNode half = await(api, d -> d.path("gates").get(0).path("executed").asLong() == 100);
        JsonNode gate = half.path("gates").get(0);
        assertThat(half.path("status").asText()).isEqualTo("running");
        assertThat(gate.path("passed").asLong()).isEqualTo(75);
        assertThat(gate.path("executed_pass_rate").asDouble()).isEqualTo(0.75);
        assertThat(gate.path("pass_rate").asDouble()).isEqualTo(0.375);
        JsonNode l = half.path("live");
        assertThat(l.path("no_worker").asBoolean()).isFalse();
        assertThat(l.path("workers_leasing").asLong()).isEqualTo(1);
        double rate = l.path("cases_per_second").asDouble();
        // 100 cases since the plan was published: the smoothed rate cannot exceed what a steady rate over the time
        // since then would need by more than the weights' spread, and is above 0.
        double elapsed = Math.max(
                1.0,
                Duration.between(
                                        Instant.parse(half.path("identity")
                                                .path("published_at")
                                                .asText()),
                                        Instant.now())
                                .toMillis()
                        / 1000.0);
        assertThat(rate).isGreaterThan(0).isLessThan(100 / Math.max(1.0, elapsed - 1) * 2 + 1);
        assertThat(l.path("eta_seconds").asLong())
                .isCloseTo((long) Math.ceil(100 / rate), org.assertj.core.data.Offset.offset(1L));
        assertThat(Instant.parse(l.path("eta_at").asText()))
                .isAfter(Instant.now().minusSeconds(1));
        JsonNode t = get(api + "/throughput?buckets=20");
        assertThat(t.path("points").size()).isPositive();
        for (JsonNode p : t.path("points")) {
            assertThat(p.has("smoothed_cases_per_second")).isTrue();
            assertThat(p.path("smoothed_cases_per_second").asDouble()).isGreaterThanOrEqualTo(0);
        }

        live.release();
        JsonNode settled = await(api, d -> d.path("status").asText().equals("settled"));
        assertThat(settled.path("gates").get(0).path("executed").asLong()).isEqualTo(200);
        assertThat(settled.path("gates").get(0).path("executed_pass_rate").asDouble())
                .isEqualTo(0.75);
        assertThat(settled.path("live").path("no_worker").asBoolean()).isFalse();
        assertThat(settled.path("live").path("eta_seconds").isNull()).isTrue();
        live.awaitWorker();
    }

    private static JsonNode get(String url) throws Exception {
        var r = Http.get(url);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /** Reads the API until {@code done} holds (each reading is an event of the worker's; bounded at two minutes). */
    private static JsonNode await(String url, Predicate<JsonNode> done) throws Exception {
        Instant until = Instant.now().plus(Duration.ofMinutes(2));
        JsonNode last = null;
        while (Instant.now().isBefore(until)) {
            last = get(url);
            if (done.test(last)) {
                return last;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the run did not get there in 2 minutes; last reading: " + last);
    }
}
