package dev.vigilo.exec.worker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.agent.EndpointLimiters;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.exec.record.LimiterState;
import dev.vigilo.exec.record.LimiterTable;
import dev.vigilo.llm.ChatLimiter;
import dev.vigilo.llm.EndpointText;
import dev.vigilo.storage.Sha256;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.jdbi.v3.core.Jdbi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker process's fleet limiters (docs/execution.md, "Fleet rate limit"): one {@link FleetLimiter} per limiter
 * key, shared by every run of the process that names the endpoint, and one lease thread ({@code vigilo-limiter})
 * that makes each due lease, one short transaction of the control database per lease ({@link LimiterTable#lease}).
 * {@link #forRun} is what the worker hands agents and judges (through {@link dev.vigilo.agent.AgentEnvironment});
 * an endpoint without {@code rate_limit} and {@code circuit_breaker} gets no limiter. Thread-safe; {@link #close}
 * stops the thread and gives this process's in-flight slots back.
 */
final class FleetLimiters implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FleetLimiters.class);

    private final Jdbi control;
    private final Consumer<Worker.LimiterReading> readings;
    private final UUID holder;
    private final LongSupplier nanos;
    private final Map<String, FleetLimiter> limiters = new ConcurrentHashMap<>();
    /** Registrations of a run's endpoint not yet written ({@code run_endpoint_limiters}), by limiter key. */
    private final Map<String, List<Registration>> registrations = new ConcurrentHashMap<>();

    private final Semaphore kick = new Semaphore(0);
    private volatile boolean closed;
    private final Thread thread;

    private record Registration(UUID runId, String at) {}

    FleetLimiters(Jdbi control, UUID holder, Consumer<Worker.LimiterReading> readings) {
        this(control, holder, readings, System::nanoTime);
    }

    FleetLimiters(Jdbi control, UUID holder, Consumer<Worker.LimiterReading> readings, LongSupplier nanos) {
        this.readings = readings;
        this.control = control;
        this.holder = holder;
        this.nanos = nanos;
        this.thread = Threads.startDaemon("limiter", this::loop);
    }

    /**
     * The limiter key of an endpoint: the sha256 (hex) of its url, model and api-key variable name, one per line. The
     * key's value is never part of it, so a key rotated under the same variable keeps its limiter.
     */
    static String key(EndpointLimiters.Endpoint e) {
        String text = e.url() + "\n" + e.model() + "\n" + e.apiKeyEnv().orElse("");
        return Sha256.of(text.getBytes(StandardCharsets.UTF_8)).toHex();
    }

    /** The limits an endpoint's frozen settings ask for; empty without {@code rate_limit} and {@code circuit_breaker}. */
    static Optional<LimiterState.Limits> limits(JsonNode settings) {
        JsonNode rate = settings.path("rate_limit");
        JsonNode breaker = settings.path("circuit_breaker");
        if (!rate.isObject() && !breaker.isObject()) {
            return Optional.empty();
        }
        return Optional.of(new LimiterState.Limits(
                rate.path("requests_per_minute").asInt(0),
                rate.path("tokens_per_minute").asInt(0),
                rate.path("max_in_flight").asInt(0),
                breaker.path("failures").asInt(DEFAULT_FAILURES),
                Duration.ofSeconds(breaker.path("cool_down_seconds").asInt(DEFAULT_COOL_DOWN_SECONDS))));
    }

    /** {@code circuit_breaker.failures} without the key (docs/formats/plan-profile.md). */
    static final int DEFAULT_FAILURES = 5;
    /** {@code circuit_breaker.cool_down_seconds} without the key. */
    static final int DEFAULT_COOL_DOWN_SECONDS = 30;

    /** The limiters of one run's endpoints: each endpoint's is recorded for the run's status at the next lease. */
    EndpointLimiters forRun(UUID runId) {
        return endpoint -> {
            Optional<LimiterState.Limits> limits = limits(endpoint.settings());
            if (limits.isEmpty()) {
                return ChatLimiter.NONE;
            }
            String key = key(endpoint);
            String display = EndpointText.display(endpoint.url()) + " model " + endpoint.model()
                    + endpoint.apiKeyEnv().map(v -> " key $" + v).orElse("");
            // The first run of this process to name the key sets this process's limits for it.
            FleetLimiter limiter = limiters.computeIfAbsent(
                    key, k -> new FleetLimiter(k, display, limits.get(), nanos, kick::release));
            registrations
                    .computeIfAbsent(key, k -> new java.util.concurrent.CopyOnWriteArrayList<>())
                    .add(new Registration(runId, endpoint.at()));
            limiter.markUrgent();
            kick.release();
            return limiter;
        };
    }

    /** This process's limiters, for {@code /metrics}. */
    List<FleetLimiter> limiters() {
        return new ArrayList<>(limiters.values());
    }

    private void loop() {
        while (!closed) {
            long now = nanos.getAsLong();
            long next = now + FleetLimiter.HEARTBEAT.toNanos();
            for (FleetLimiter l : limiters.values()) {
                long due = l.dueAt(now);
                if (due - now <= 0) {
                    lease(l);
                    due = l.dueAt(nanos.getAsLong());
                }
                if (due - next < 0) {
                    next = due;
                }
            }
            long wait = next - nanos.getAsLong();
            if (wait > 0) {
                try {
                    kick.tryAcquire(wait, TimeUnit.NANOSECONDS);
                    kick.drainPermits();
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private void lease(FleetLimiter l) {
        FleetLimiter.Request r = l.take();
        List<Registration> pending = registrations.get(l.key);
        try {
            LimiterState.Step step = control.inTransaction(h -> {
                LimiterState.Step s = LimiterTable.lease(h, l.key, l.endpoint, holder, l.limits, r.report(), r.want());
                if (pending != null) {
                    for (Registration reg : pending) {
                        LimiterTable.register(h, reg.runId(), reg.at(), l.key);
                    }
                }
                return s;
            });
            if (pending != null) {
                registrations.computeIfPresent(l.key, (k, list) -> {
                    list.removeAll(pending);
                    return list.isEmpty() ? null : list;
                });
            }
            l.apply(step);
            LimiterState st = step.state();
            try {
                readings.accept(new Worker.LimiterReading(
                        l.key,
                        l.endpoint,
                        st.limits().requestsPerMinute(),
                        Math.round(st.limits().requestsPerMinute() * st.rateFactor()),
                        st.rateFactor(),
                        st.rateReason(),
                        st.circuit().wire(),
                        st.circuitReason(),
                        l.inFlight(),
                        l.waiting()));
            } catch (RuntimeException e) {
                LOG.debug("fleet limiter {}: a listener failed: {}", l.endpoint, e.toString());
            }
        } catch (RuntimeException e) {
            LOG.warn("fleet limiter {}: lease failed, calls wait: {}", l.endpoint, e.getMessage());
            l.failed();
        }
    }

    @Override
    public void close() {
        closed = true;
        kick.release();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (FleetLimiter l : limiters.values()) {
            try {
                control.useHandle(h -> LimiterTable.release(h, l.key, holder));
            } catch (RuntimeException e) {
                LOG.debug("fleet limiter {}: slots not given back (they lapse): {}", l.endpoint, e.getMessage());
            }
        }
    }
}
