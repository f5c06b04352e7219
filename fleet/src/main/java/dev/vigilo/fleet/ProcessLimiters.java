package dev.vigilo.fleet;

import dev.vigilo.common.concurrent.Threads;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One process's fleet limiters (docs/execution.md, "Fleet rate limit"): one {@link FleetLimiter} per limiter key,
 * shared by every caller of the process that names the endpoint (an exec worker's runs, a datagen run's chat steps),
 * and one lease thread ({@code vigilo-limiter}) that makes each due lease, one short transaction of the control
 * database per lease ({@link LimiterTable#lease}). Thread-safe; {@link #close} stops the thread and gives this
 * process's in-flight slots back.
 */
public final class ProcessLimiters implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ProcessLimiters.class);

    /**
     * What the owner of the limiters adds to their leases: work to do in a lease's transaction (exec records which
     * runs use the limiter) and what to do with the fleet's state after it (exec's status and {@code /metrics}).
     */
    public interface Listener {
        /** Called inside the lease's transaction of limiter {@code key}, after the lease; a failure rolls it back. */
        default void inLease(Handle h, String key) {}

        /** Called after a lease of {@code limiter} committed, with the fleet's state it read back. */
        default void leased(FleetLimiter limiter, LimiterState state) {}

        /** Called after a lease of limiter {@code key}'s transaction committed (what {@link #inLease} did is durable). */
        default void committed(String key) {}
    }

    private final Jdbi control;
    private final Listener listener;
    private final UUID holder;
    private final LongSupplier nanos;
    private final Map<String, FleetLimiter> limiters = new ConcurrentHashMap<>();

    private final Semaphore kick = new Semaphore(0);
    private volatile boolean closed;
    private final Thread thread;

    /** Limiters of process {@code holder} (a fresh id per process) on the control database {@code control}. */
    public ProcessLimiters(Jdbi control, UUID holder, Listener listener) {
        this(control, holder, listener, System::nanoTime);
    }

    /** As {@link #ProcessLimiters(Jdbi, UUID, Listener)} on another clock (tests). */
    public ProcessLimiters(Jdbi control, UUID holder, Listener listener, LongSupplier nanos) {
        this.control = control;
        this.holder = holder;
        this.listener = listener;
        this.nanos = nanos;
        this.thread = Threads.startDaemon("limiter", this::loop);
    }

    /**
     * The limiter key of an endpoint: the sha256 (hex) of its url, model and api-key variable name, one per line. The
     * key's value is never part of it, so a key rotated under the same variable keeps its limiter.
     */
    public static String key(String url, String model, Optional<String> apiKeyEnv) {
        String text = url + "\n" + model + "\n" + apiKeyEnv.orElse("");
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /**
     * The process's limiter of {@code key}: created with {@code limits} by the first caller that names the key (whose
     * limits this process then applies at its leases); a lease is made due at once (the caller may have work for
     * {@link Listener#inLease}).
     */
    public FleetLimiter limiter(String key, String endpoint, LimiterState.Limits limits) {
        FleetLimiter limiter =
                limiters.computeIfAbsent(key, k -> new FleetLimiter(k, endpoint, limits, nanos, kick::release));
        limiter.markUrgent();
        kick.release();
        return limiter;
    }

    /** This process's limiters. */
    public List<FleetLimiter> limiters() {
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
        try {
            LimiterState.Step step = control.inTransaction(h -> {
                LimiterState.Step s = LimiterTable.lease(h, l.key, l.endpoint, holder, l.limits, r.report(), r.want());
                listener.inLease(h, l.key);
                return s;
            });
            listener.committed(l.key);
            l.apply(step);
            try {
                listener.leased(l, step.state());
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
