package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real worker executing the quickstart run reports through {@link WorkerMetrics}. */
class WorkerMetricsTest {
    @TempDir
    Path home;

    @Test
    void aWorkersClaimsCompletionsCasesAndAgentTimesAreCounted() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (QuickstartState state = new QuickstartState(home, new WorkerMetrics(registry))) {
            assertThat(registry.get("vigilo_worker_chunks_claimed").counter().count())
                    .isEqualTo(1.0);
            assertThat(registry.get("vigilo_worker_chunks_completed").counter().count())
                    .isEqualTo(1.0);
            double ok = registry.get("vigilo_worker_cases_executed")
                    .tag("status", "ok")
                    .counter()
                    .count();
            double errored = registry.get("vigilo_worker_cases_executed")
                    .tag("status", "errored")
                    .counter()
                    .count();
            assertThat(ok + errored).isEqualTo(12.0);
            assertThat(registry.get("vigilo_worker_agent").timer().count()).isEqualTo(12);
            assertThat(registry.get("vigilo_worker_runs_settled")
                            .tag("status", "settled")
                            .counter()
                            .count())
                    .isEqualTo(1.0);
            assertThat(registry.scrape())
                    .contains("vigilo_worker_agent_seconds_bucket")
                    .contains("vigilo_worker_cases_executed_total{status=\"ok\"}");
        }
    }
}
