package dev.vigilo.cli;

import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.web.MetricsEndpoint;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jdbi.v3.core.Jdbi;

/**
 * {@code /readyz} of {@code vigilo worker --metrics-port}: ready once the worker has started and while it is not
 * stopping, if its control database answers {@code SELECT 1} within {@link #PROBE_TIMEOUT}. Each probe asks the
 * database afresh (an orchestrator asks every few seconds); the reason given when not ready names no host, user or
 * password. Thread-safe.
 */
final class WorkerReadiness implements MetricsEndpoint.Readiness {
    /** How long a probe waits for the control database; an orchestrator's own probe timeout is a few seconds. */
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

    private final Jdbi control;
    private volatile boolean started;
    private volatile boolean stopping;

    WorkerReadiness(Jdbi control) {
        this.control = Objects.requireNonNull(control, "control");
    }

    /** The worker is about to run: it may become ready. */
    void started() {
        started = true;
    }

    /** The worker is stopping (a signal, or its run ended): never ready again. */
    void stopping() {
        stopping = true;
    }

    @Override
    public Optional<String> notReady() {
        if (stopping) {
            return Optional.of("stopping");
        }
        if (!started) {
            return Optional.of("starting");
        }
        // On a thread of its own, so a database that does not answer holds neither the request past the timeout nor
        // the next probes (the query itself ends with the connection pool's timeout).
        CompletableFuture<Integer> probe = CompletableFuture.supplyAsync(
                () -> control.withHandle(
                        h -> h.createQuery("SELECT 1").mapTo(Integer.class).one()),
                task -> Threads.startDaemon("readiness-probe", task));
        try {
            probe.get(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            return stopping ? Optional.of("stopping") : Optional.empty();
        } catch (TimeoutException e) {
            return Optional.of("the control database did not answer within " + PROBE_TIMEOUT.toSeconds() + " s");
        } catch (ExecutionException e) {
            return Optional.of("the control database cannot be reached");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted");
        }
    }
}
