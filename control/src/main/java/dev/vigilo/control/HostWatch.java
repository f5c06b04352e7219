package dev.vigilo.control;

import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.VigiloException;
import dev.vigilo.common.retry.RetryPolicy;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a client's embedded server served while the client runs: a daemon thread checks every
 * {@value #CHECK_MILLIS} ms whether the host the client joined still runs, and when it is gone (killed, or exited
 * because its PostgreSQL died) relaunches one as a new command would ({@link EmbeddedServer#rejoin}: under the server
 * lock, so of several clients finding it gone at once one starts a host and the others join it), retrying with
 * back-off for as long as that fails. The new host reuses the port, so the client's connection pools reconnect by
 * themselves and the client carries on. A host that is gone together with its data directory (the Vigilo home was
 * deleted) is not replaced: there is nothing left to serve.
 *
 * <p>Thread-safe. {@link #close()} stops the thread, interrupting a restart in progress (a host it launched stops by
 * itself once it has no client).
 */
final class HostWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HostWatch.class);
    static final long CHECK_MILLIS = 1_000;
    /** Restarts are retried for as long as the client runs: 1 s, 2 s, 4 s ... at most 30 s apart. */
    private static final RetryPolicy RESTARTS =
            RetryPolicy.of(Integer.MAX_VALUE, Duration.ofSeconds(1), Duration.ofSeconds(30));

    private final EmbeddedLayout layout;
    private final Supplier<ServerState> rejoin;
    private final ScheduledExecutorService thread;
    private volatile ServerState state;

    private HostWatch(EmbeddedLayout layout, ServerState state, Supplier<ServerState> rejoin) {
        this.layout = Objects.requireNonNull(layout, "layout");
        this.state = Objects.requireNonNull(state, "state");
        this.rejoin = Objects.requireNonNull(rejoin, "rejoin");
        this.thread = Executors.newSingleThreadScheduledExecutor(Threads.daemonFactory("pg-watch"));
    }

    /**
     * Starts watching the host of {@code state}.
     *
     * @param rejoin joins or starts a host for this client under the server lock and returns its state; throws an
     *               {@link dev.vigilo.common.errors.UnavailableException} when that fails for now
     */
    static HostWatch start(EmbeddedLayout layout, ServerState state, Supplier<ServerState> rejoin) {
        HostWatch watch = new HostWatch(layout, state, rejoin);
        watch.thread.scheduleWithFixedDelay(watch::check, CHECK_MILLIS, CHECK_MILLIS, TimeUnit.MILLISECONDS);
        return watch;
    }

    /** The state of the host this client uses now. */
    ServerState state() {
        return state;
    }

    private void check() {
        ServerState known = state;
        if (known.host().isAlive() || !Files.isDirectory(layout.dataDirectory())) {
            return;
        }
        LOG.warn(
                "the embedded PostgreSQL server host (pid {}) for {} is gone; restarting it (see {})",
                known.host().pid(),
                layout.root(),
                layout.logFile());
        try {
            ServerState now = RESTARTS.run(attempt -> {
                try {
                    return rejoin.get();
                } catch (VigiloException e) {
                    LOG.warn(
                            "restarting the embedded PostgreSQL server (attempt {}) failed: {}", attempt, firstLine(e));
                    throw e;
                }
            });
            state = now;
            if (now.port() == known.port()) {
                LOG.warn(
                        "the embedded PostgreSQL server for {} is back (host pid {}, port {})",
                        layout.root(),
                        now.host().pid(),
                        now.port());
            } else {
                // Only when another program took the port meanwhile: this process's pools still name the old one.
                LOG.warn(
                        "the embedded PostgreSQL server for {} is back on port {}, not {}: this process cannot reach"
                                + " it; restart it",
                        layout.root(),
                        now.port(),
                        known.port());
            }
        } catch (CancelledException e) {
            // close() interrupted the restart: this client is leaving.
        } catch (RuntimeException e) {
            // Not an availability failure (a bug); the next check tries again.
            LOG.warn("restarting the embedded PostgreSQL server failed: {}", firstLine(e));
        }
    }

    private static String firstLine(Throwable e) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }

    @Override
    public void close() {
        thread.shutdownNow();
        try {
            if (!thread.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn("the embedded PostgreSQL watch of {} did not stop within 10 s", layout.root());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
