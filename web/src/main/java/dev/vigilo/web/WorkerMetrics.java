package dev.vigilo.web;

import dev.vigilo.exec.UsageSummary;
import dev.vigilo.exec.worker.Worker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A worker's metrics, kept where they happen: a {@link Worker.Listener} that counts into a Micrometer registry
 * (docs/web.md, "Metrics"). Pass it to the {@link Worker} and expose the registry (for instance with
 * {@link Dashboard#registry()} in the same process, or any Prometheus endpoint).
 *
 * <ul>
 *   <li>{@code vigilo_worker_chunks_claimed_total}, {@code vigilo_worker_chunks_completed_total},
 *       {@code vigilo_worker_chunks_given_back_total{outcome=requeued|failed|fenced}};
 *   <li>{@code vigilo_worker_cases_executed_total{status=ok|errored}}: cases this worker executed;
 *   <li>{@code vigilo_worker_cases_carried_total}: cases of completed chunks carried forward instead of executed: from
 *       an earlier holder's partial receipt chain (docs/execution.md, "Resume from partial receipts") or kept by a
 *       rerun from the earlier receipt; in no other case count;
 *   <li>{@code vigilo_worker_agent_seconds}: the agent's time per case (a histogram with percentiles);
 *   <li>{@code vigilo_worker_heartbeats_total}, {@code vigilo_worker_leases_held} (as of the last heartbeat),
 *       {@code vigilo_worker_lease_renewals_total};
 *   <li>{@code vigilo_worker_runs_settled_total{status}};
 *   <li>per fleet limiter ({@code endpoint}: url, model and api-key variable name), as of its last lease:
 *       {@code vigilo_worker_limiter_requests_per_minute} (the fleet's current rate),
 *       {@code vigilo_worker_limiter_rate_factor}, {@code vigilo_worker_limiter_circuit_open} (1 open or half-open,
 *       0 closed), {@code vigilo_worker_limiter_in_flight}, {@code vigilo_worker_limiter_waiting}, and
 *       {@code vigilo_worker_limiter_info{endpoint, circuit, rate_reason}} (1; why the rate last changed).
 * </ul>
 *
 * Thread-safe (Micrometer's meters are).
 */
public final class WorkerMetrics implements Worker.Listener {
    private final MeterRegistry registry;
    private final Counter claimed;
    private final Counter completed;
    private final Counter ok;
    private final Counter errored;
    private final Counter carried;
    private final Timer agent;
    private final Counter heartbeats;
    private final Counter renewals;
    private final AtomicInteger held = new AtomicInteger();
    private final Map<String, LimiterGauges> limiters = new ConcurrentHashMap<>();

    /** One limiter's gauges and its current info meter (replaced when its labels change). */
    private static final class LimiterGauges {
        final AtomicLong rate = new AtomicLong();
        final AtomicReference<Double> factor = new AtomicReference<>(1.0);
        final AtomicInteger open = new AtomicInteger();
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger waiting = new AtomicInteger();
        Meter info;
        String infoLabels = "";
    }

    public WorkerMetrics(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
        claimed = Counter.builder("vigilo_worker_chunks_claimed").register(registry);
        completed = Counter.builder("vigilo_worker_chunks_completed").register(registry);
        ok = Counter.builder("vigilo_worker_cases_executed").tag("status", "ok").register(registry);
        errored = Counter.builder("vigilo_worker_cases_executed")
                .tag("status", "errored")
                .register(registry);
        carried = Counter.builder("vigilo_worker_cases_carried")
                .description("cases carried forward (a partial receipt chain, a rerun's kept cases), not executed here")
                .register(registry);
        agent = Timer.builder("vigilo_worker_agent")
                .description("The agent's time per case, over its attempts")
                .publishPercentileHistogram()
                .publishPercentiles(0.5, 0.9, 0.99)
                .register(registry);
        heartbeats = Counter.builder("vigilo_worker_heartbeats").register(registry);
        renewals = Counter.builder("vigilo_worker_lease_renewals").register(registry);
        registry.gauge("vigilo_worker_leases_held", held);
    }

    @Override
    public void chunkClaimed(UUID runId, long chunkIndex) {
        claimed.increment();
    }

    @Override
    public void chunkCompleted(UUID runId, long chunkIndex, int cases) {
        completed.increment();
    }

    @Override
    public void caseExecuted(UUID runId, Duration agentTime, boolean erroredCase) {
        (erroredCase ? errored : ok).increment();
        agent.record(agentTime);
    }

    @Override
    public void casesCarried(UUID runId, long chunkIndex, int cases) {
        carried.increment(cases);
    }

    /**
     * {@code vigilo_worker_model_calls{role}}, {@code vigilo_worker_model_tokens{role, direction=input|output}} and
     * {@code vigilo_worker_model_cost_usd{role}} (the priced part; calls of a model without a price count in
     * {@code vigilo_worker_model_calls_unpriced{role}} instead, never as 0).
     */
    @Override
    public void modelUsage(UUID runId, UsageSummary usage) {
        count("agent", usage.agent());
        count("judge", usage.judges());
    }

    private void count(String role, UsageSummary.Part p) {
        if (p.calls() == 0) {
            return;
        }
        Counter.builder("vigilo_worker_model_calls")
                .tag("role", role)
                .register(registry)
                .increment(p.calls());
        Counter.builder("vigilo_worker_model_tokens")
                .tag("role", role)
                .tag("direction", "input")
                .register(registry)
                .increment(p.inputTokens());
        Counter.builder("vigilo_worker_model_tokens")
                .tag("role", role)
                .tag("direction", "output")
                .register(registry)
                .increment(p.outputTokens());
        if (p.costUsd().isPresent()) {
            Counter.builder("vigilo_worker_model_cost_usd")
                    .tag("role", role)
                    .register(registry)
                    .increment(p.costUsd().get().doubleValue());
        } else {
            Counter.builder("vigilo_worker_model_calls_unpriced")
                    .tag("role", role)
                    .register(registry)
                    .increment(p.calls());
        }
    }

    @Override
    public void chunkGivenBack(UUID runId, long chunkIndex, String outcome) {
        Counter.builder("vigilo_worker_chunks_given_back")
                .tag("outcome", outcome)
                .register(registry)
                .increment();
    }

    @Override
    public void heartbeat(int heldNow, int renewed) {
        heartbeats.increment();
        renewals.increment(renewed);
        held.set(heldNow);
    }

    @Override
    public void limiterLeased(Worker.LimiterReading r) {
        LimiterGauges g = limiters.computeIfAbsent(r.key(), k -> {
            LimiterGauges n = new LimiterGauges();
            Tags t = Tags.of("endpoint", r.endpoint());
            registry.gauge("vigilo_worker_limiter_requests_per_minute", t, n.rate);
            Gauge.builder("vigilo_worker_limiter_rate_factor", n.factor, AtomicReference::get)
                    .tags(t)
                    .register(registry);
            registry.gauge("vigilo_worker_limiter_circuit_open", t, n.open);
            registry.gauge("vigilo_worker_limiter_in_flight", t, n.inFlight);
            registry.gauge("vigilo_worker_limiter_waiting", t, n.waiting);
            return n;
        });
        g.rate.set(r.currentRequestsPerMinute());
        g.factor.set(r.rateFactor());
        g.open.set(r.circuit().equals("closed") ? 0 : 1);
        g.inFlight.set(r.inFlight());
        g.waiting.set(r.waiting());
        synchronized (g) {
            String labels = r.circuit() + "\n" + r.rateReason();
            if (!labels.equals(g.infoLabels)) {
                if (g.info != null) {
                    registry.remove(g.info);
                }
                g.info = Gauge.builder("vigilo_worker_limiter_info", () -> 1)
                        .tags("endpoint", r.endpoint(), "circuit", r.circuit(), "rate_reason", r.rateReason())
                        .register(registry);
                g.infoLabels = labels;
            }
        }
    }

    @Override
    public void runSettled(UUID runId, String status, Duration took) {
        Counter.builder("vigilo_worker_runs_settled")
                .tag("status", status)
                .register(registry)
                .increment();
        Timer.builder("vigilo_worker_settlement")
                .description("time of a settlement this worker made (aggregate sums; independent of epochs)")
                .register(registry)
                .record(took);
    }
}
