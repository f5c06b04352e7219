package dev.vigilo.exec.worker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.agent.EndpointLimiters;
import dev.vigilo.exec.record.RunLimiters;
import dev.vigilo.fleet.FleetLimiter;
import dev.vigilo.fleet.LimiterState;
import dev.vigilo.fleet.ProcessLimiters;
import dev.vigilo.llm.ChatLimiter;
import dev.vigilo.llm.EndpointText;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * A worker process's fleet limiters (docs/execution.md, "Fleet rate limit"): the fleet module's {@link
 * ProcessLimiters} (one {@link FleetLimiter} per limiter key, shared by every run of the process that names the
 * endpoint, and the lease thread), plus what exec adds: the limits read from a run's frozen endpoint settings, the
 * record of which run's endpoints use which limiter ({@code run_endpoint_limiters}, written in the lease's
 * transaction) and the readings for {@code /metrics}. {@link #forRun} is what the worker hands agents and judges
 * (through {@link dev.vigilo.agent.AgentEnvironment}); an endpoint without {@code rate_limit} and {@code
 * circuit_breaker} gets no limiter. Thread-safe; {@link #close} stops the thread and gives this process's in-flight
 * slots back.
 */
final class FleetLimiters implements AutoCloseable {
    private final ProcessLimiters limiters;
    /** Registrations of a run's endpoint not yet written ({@code run_endpoint_limiters}), by limiter key. */
    private final Map<String, List<Registration>> registrations = new ConcurrentHashMap<>();
    /** The registrations the lease in progress wrote, by key (only the lease thread touches it). */
    private final Map<String, List<Registration>> writing = new ConcurrentHashMap<>();

    private record Registration(UUID runId, String at) {}

    FleetLimiters(Jdbi control, UUID holder, Consumer<Worker.LimiterReading> readings) {
        this(control, holder, readings, System::nanoTime);
    }

    FleetLimiters(Jdbi control, UUID holder, Consumer<Worker.LimiterReading> readings, LongSupplier nanos) {
        this.limiters = new ProcessLimiters(
                control,
                holder,
                new ProcessLimiters.Listener() {
                    @Override
                    public void inLease(Handle h, String key) {
                        List<Registration> pending = registrations.get(key);
                        if (pending == null) {
                            return;
                        }
                        List<Registration> now = List.copyOf(pending);
                        for (Registration reg : now) {
                            RunLimiters.register(h, reg.runId(), reg.at(), key);
                        }
                        writing.put(key, now);
                    }

                    @Override
                    public void committed(String key) {
                        List<Registration> written = writing.remove(key);
                        if (written != null) {
                            registrations.computeIfPresent(key, (k, list) -> {
                                list.removeAll(written);
                                return list.isEmpty() ? null : list;
                            });
                        }
                    }

                    @Override
                    public void leased(FleetLimiter l, LimiterState st) {
                        readings.accept(new Worker.LimiterReading(
                                l.key(),
                                l.endpoint(),
                                st.limits().requestsPerMinute(),
                                Math.round(st.limits().requestsPerMinute() * st.rateFactor()),
                                st.rateFactor(),
                                st.rateReason(),
                                st.circuit().wire(),
                                st.circuitReason(),
                                l.inFlight(),
                                l.waiting()));
                    }
                },
                nanos);
    }

    /**
     * The limiter key of an endpoint: the sha256 (hex) of its url, model and api-key variable name, one per line. The
     * key's value is never part of it, so a key rotated under the same variable keeps its limiter.
     */
    static String key(EndpointLimiters.Endpoint e) {
        return ProcessLimiters.key(e.url().toString(), e.model(), e.apiKeyEnv());
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
    static final int DEFAULT_FAILURES = LimiterState.Limits.DEFAULT_FAILURES;
    /** {@code circuit_breaker.cool_down_seconds} without the key. */
    static final int DEFAULT_COOL_DOWN_SECONDS = LimiterState.Limits.DEFAULT_COOL_DOWN_SECONDS;

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
            registrations
                    .computeIfAbsent(key, k -> new CopyOnWriteArrayList<>())
                    .add(new Registration(runId, endpoint.at()));
            // The first run of this process to name the key sets this process's limits for it.
            return limiters.limiter(key, display, limits.get());
        };
    }

    /** This process's limiters, for {@code /metrics}. */
    List<FleetLimiter> limiters() {
        return limiters.limiters();
    }

    @Override
    public void close() {
        limiters.close();
    }
}
