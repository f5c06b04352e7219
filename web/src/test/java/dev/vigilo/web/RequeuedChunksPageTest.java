package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.exec.ExecutionConfig;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The run page's progress block shows {@code chunks_requeued_after_expiry} (docs/cli.md, "run status"): 0 for a run
 * whose chunks were each claimed once, and the count the execution records once a chunk was taken over after its
 * lease expired.
 */
class RequeuedChunksPageTest {
    private static final ObjectMapper JSON = new ObjectMapper();

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
    void theProgressBlockCountsChunksRequeuedAfterALeaseExpiry() throws Exception {
        live = new LiveRun(home);
        dashboard =
                Dashboard.start(new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()), live.sources());
        String base = "http://127.0.0.1:" + dashboard.port();
        live.startWorker();
        live.release();
        live.awaitWorker(); // it exits once the run settled
        JsonNode status = JSON.readTree(Http.get(base + "/api/runs/" + live.run).body());
        assertThat(status.path("status").asText()).isEqualTo("settled");
        assertThat(status.at("/execution/chunks_requeued_after_expiry").asLong())
                .isZero();
        assertThat(Http.get(base + "/runs/" + live.run).body())
                .contains("<span id=\"chunks-requeued-after-expiry\">0</span> requeued after a lease expiry");

        // What a claim taking over an expired lease records on the chunk (execution migration V9; ChunkTables):
        // the page reads the count from the run's execution database (the control one here), as `run status` does.
        int updated = live.placements
                .jdbi(ExecutionConfig.CONTROL)
                .withHandle(h -> h.createUpdate(
                                "UPDATE exec_chunks SET lease_expiries = lease_expiries + 1 WHERE run_id = :run")
                        .bind("run", live.run)
                        .execute());
        assertThat(updated).isEqualTo(2);
        assertThat(Http.get(base + "/runs/" + live.run).body())
                .contains("<span id=\"chunks-requeued-after-expiry\">2</span> requeued after a lease expiry");
        assertThat(JSON.readTree(Http.get(base + "/api/runs/" + live.run).body())
                        .at("/execution/chunks_requeued_after_expiry")
                        .asLong())
                .isEqualTo(2);
    }
}
