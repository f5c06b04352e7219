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
            // Nothing was resumed from a partial receipt chain: nothing carried.
            assertThat(registry.get("vigilo_worker_cases_carried").counter().count())
                    .isZero();
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

    @Test
    void casesCarriedFromAPartialChainAreCountedApartFromCasesExecuted() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        WorkerMetrics metrics = new WorkerMetrics(registry);
        java.util.UUID run = java.util.UUID.randomUUID();
        // A resumed chunk of 100 cases: 64 carried from the chain, 36 executed here (as the worker reports it).
        metrics.chunkCompleted(run, 0, 36);
        metrics.casesCarried(run, 0, 64);
        for (int i = 0; i < 36; i++) {
            metrics.caseExecuted(run, java.time.Duration.ofMillis(10), false);
        }
        assertThat(registry.get("vigilo_worker_cases_carried").counter().count())
                .isEqualTo(64.0);
        assertThat(registry.get("vigilo_worker_cases_executed")
                        .tag("status", "ok")
                        .counter()
                        .count())
                .isEqualTo(36.0);
        assertThat(registry.scrape()).contains("vigilo_worker_cases_carried_total 64.0");
    }

    @Test
    void modelCallsTokensAndCostAreCountedByRoleAndUnpricedCallsApart() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        WorkerMetrics metrics = new WorkerMetrics(registry);
        java.util.UUID run = java.util.UUID.randomUUID();
        var priced = new dev.vigilo.exec.UsageSummary.Part(
                3, 300, 0, 30, java.util.Optional.of(new java.math.BigDecimal("0.0006")));
        var unpriced = new dev.vigilo.exec.UsageSummary.Part(2, 200, 0, 10, java.util.Optional.empty());
        metrics.modelUsage(
                run, new dev.vigilo.exec.UsageSummary(unpriced, priced, unpriced, java.util.List.of("judge-x")));
        metrics.modelUsage(
                run,
                new dev.vigilo.exec.UsageSummary(
                        priced, priced, dev.vigilo.exec.UsageSummary.Part.NONE, java.util.List.of()));
        assertThat(registry.get("vigilo_worker_model_calls")
                        .tag("role", "agent")
                        .counter()
                        .count())
                .isEqualTo(6.0);
        assertThat(registry.get("vigilo_worker_model_tokens")
                        .tag("role", "agent")
                        .tag("direction", "input")
                        .counter()
                        .count())
                .isEqualTo(600.0);
        assertThat(registry.get("vigilo_worker_model_cost_usd")
                        .tag("role", "agent")
                        .counter()
                        .count())
                .isEqualTo(0.0012, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(registry.get("vigilo_worker_model_calls_unpriced")
                        .tag("role", "judge")
                        .counter()
                        .count())
                .isEqualTo(2.0);
        assertThat(registry.find("vigilo_worker_model_cost_usd")
                        .tag("role", "judge")
                        .counter())
                .as("an unknown cost is never counted as 0")
                .isNull();
    }

    @Test
    void aWorkerProcessCanServeItsMetricsAlone() {
        try (MetricsEndpoint endpoint =
                MetricsEndpoint.start(new DashboardOptions(DashboardOptions.LOOPBACK, 0, java.util.Optional.empty()))) {
            WorkerMetrics metrics = new WorkerMetrics(endpoint.registry());
            metrics.chunkClaimed(java.util.UUID.randomUUID(), 0);
            metrics.caseExecuted(java.util.UUID.randomUUID(), java.time.Duration.ofMillis(250), false);
            metrics.heartbeat(3, 3);
            String base = "http://127.0.0.1:" + endpoint.port();
            var r = Http.get(base + "/metrics");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body())
                    .contains("vigilo_worker_chunks_claimed_total 1.0")
                    .contains("vigilo_worker_leases_held 3.0")
                    .contains("vigilo_worker_agent_seconds_count 1")
                    .contains("jvm_memory_used_bytes");
            assertThat(Http.get(base + "/runs").statusCode()).isEqualTo(404);
        }
        try (MetricsEndpoint open =
                MetricsEndpoint.start(new DashboardOptions("0.0.0.0", 0, java.util.Optional.empty()))) {
            String base = "http://127.0.0.1:" + open.port();
            assertThat(open.tokenRequired()).isTrue();
            assertThat(Http.get(base + "/metrics").statusCode()).isEqualTo(401);
            assertThat(Http.get(base + "/metrics", "Authorization", "Bearer " + open.token())
                            .statusCode())
                    .isEqualTo(200);
        }
    }

    @Test
    void probesSayAliveAndReadyAsTheReadinessSaysWithoutTheToken() throws java.io.IOException {
        java.util.concurrent.atomic.AtomicReference<java.util.Optional<String>> why =
                new java.util.concurrent.atomic.AtomicReference<>(java.util.Optional.of("starting"));
        try (MetricsEndpoint open =
                MetricsEndpoint.start(new DashboardOptions("0.0.0.0", 0, java.util.Optional.empty()), why::get)) {
            String base = "http://127.0.0.1:" + open.port();
            var healthy = Http.get(base + "/healthz");
            assertThat(healthy.statusCode()).isEqualTo(200);
            assertThat(healthy.body()).isEqualTo("ok\n");
            var starting = Http.get(base + "/readyz");
            assertThat(starting.statusCode()).isEqualTo(503);
            assertThat(starting.body()).isEqualTo("not ready: starting\n");
            why.set(java.util.Optional.empty());
            var ready = Http.get(base + "/readyz");
            assertThat(ready.statusCode()).isEqualTo(200);
            assertThat(ready.body()).isEqualTo("ready\n");
            // The probes need no token; the metrics still do.
            assertThat(Http.get(base + "/metrics").statusCode()).isEqualTo(401);
        }
        try (MetricsEndpoint local =
                MetricsEndpoint.start(new DashboardOptions(DashboardOptions.LOOPBACK, 0, java.util.Optional.empty()))) {
            String base = "http://127.0.0.1:" + local.port();
            assertThat(Http.get(base + "/readyz").statusCode()).isEqualTo(200);
            // A loopback bind answers loopback host names only, probes included.
            int port = local.port();
            assertThat(Http.status(Http.raw(
                            port,
                            "GET /healthz HTTP/1.1\r\nHost: attacker.example:" + port
                                    + "\r\nConnection: close\r\n\r\n")))
                    .isEqualTo(403);
        }
    }

    @Test
    void eachFleetLimiterShowsItsRateWhyItLastChangedAndItsCircuit() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        WorkerMetrics metrics = new WorkerMetrics(registry);
        String endpoint = "http://127.0.0.1:9/v1 model m key $K";
        metrics.limiterLeased(new dev.vigilo.exec.worker.Worker.LimiterReading(
                "k", endpoint, 600, 600, 1.0, "configured", "closed", "no failures", 3, 1));
        metrics.limiterLeased(new dev.vigilo.exec.worker.Worker.LimiterReading(
                "k", endpoint, 600, 300, 0.5, "429 Too Many Requests: rate lowered", "open", "5 in a row", 0, 7));
        assertThat(registry.get("vigilo_worker_limiter_requests_per_minute")
                        .tag("endpoint", endpoint)
                        .gauge()
                        .value())
                .isEqualTo(300.0);
        assertThat(registry.get("vigilo_worker_limiter_rate_factor").gauge().value())
                .isEqualTo(0.5);
        assertThat(registry.get("vigilo_worker_limiter_circuit_open").gauge().value())
                .isEqualTo(1.0);
        assertThat(registry.get("vigilo_worker_limiter_waiting").gauge().value())
                .isEqualTo(7.0);
        String scrape = registry.scrape();
        assertThat(scrape)
                .contains("rate_reason=\"429 Too Many Requests: rate lowered\"")
                .doesNotContain("rate_reason=\"configured\"");
    }
}
