package dev.vigilo.exec;

import dev.vigilo.common.errors.Secrets;
import dev.vigilo.common.retry.RetryPolicy;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's waits for services that are out (docs/execution.md, "Outages"): runs an operation again, after a bounded
 * back-off of its {@link RetryPolicy}, for as long as {@link Outages} says its failure is an outage of the service
 * it calls, so the outage costs the chunk no attempt; any other failure is the caller's.
 *
 * <p>It also keeps which services are out now, for the worker's log (one line when an outage begins, one when it
 * ends), its {@link OutageListener} and the status rows ({@link WaitBoard}). An outage of a service (a store
 * binding, a database alias) begins with the first failed operation and ends when an operation that waited for it
 * succeeds (or fails otherwise: the service answered); operations that never failed do not end it, so a disk that is
 * full for writes stays out while reads of it succeed. Thread-safe: every chunk thread, the heartbeat and the claiming
 * thread share one instance.
 */
public final class OutageWaits {
    private static final Logger LOG = LoggerFactory.getLogger(OutageWaits.class);
    /** Longest error text kept per outage (status rows and the log show it). */
    static final int MAX_ERROR = 500;

    /** One service out now: since when and why (the latest failure, one line, credentials masked). */
    public record Current(Service service, String target, Instant since, String error) {}

    private record Key(Service service, String target) {}

    /** An outage in progress; identity matters (a later outage of the same service is another object). */
    private static final class Outage {
        final Instant since = Instant.now();
        final long started = System.nanoTime();
        final AtomicInteger waiters = new AtomicInteger();
        volatile String error;

        Outage(String error) {
            this.error = error;
        }
    }

    private final Map<Service, RetryPolicy> policies = new EnumMap<>(Service.class);
    private final RetryPolicy policy;
    private final OutageListener listener;
    private final Runnable changed;
    private final Map<Key, Outage> current = new ConcurrentHashMap<>();

    /**
     * @param policy   the back-off between tries (its attempt count is not used: waits last as long as the outage)
     * @param listener told when an outage begins, of each wait and when it ends
     * @param changed  called whenever an outage begins or ends (the status rows are republished)
     */
    public OutageWaits(RetryPolicy policy, OutageListener listener, Runnable changed) {
        Objects.requireNonNull(policy, "policy");
        this.policy = new RetryPolicy(
                Integer.MAX_VALUE,
                policy.initialBackoff(),
                policy.maxBackoff(),
                e -> Outages.classify(e).isPresent());
        for (Service s : Service.values()) {
            policies.put(s, this.policy.retrying(e -> Outages.isOutageOf(s, e)));
        }
        this.listener = Objects.requireNonNull(listener, "listener");
        this.changed = Objects.requireNonNull(changed, "changed");
    }

    /** The outages in progress, oldest first. */
    public List<Current> current() {
        List<Current> out = new ArrayList<>();
        current.forEach((k, o) -> out.add(new Current(k.service(), k.target(), o.since, o.error)));
        out.sort((a, b) -> a.since().compareTo(b.since()));
        return out;
    }

    /** The back-off bound before the {@code failures + 1}-th try of an operation that failed {@code failures} times. */
    public Duration backoff(int failures) {
        return policy.backoffBound(Math.max(2, failures + 1));
    }

    /**
     * Runs {@code action} (attempt numbers start at 1) until it succeeds or fails with anything but an outage of
     * {@code service}; waits between tries. Interruption while waiting ends it with a
     * {@link dev.vigilo.common.errors.CancelledException}.
     *
     * @param target the store binding or database alias the action calls (what the status rows name)
     */
    public <T> T await(Service service, String target, RetryPolicy.Action<T> action) {
        Waiter w = new Waiter(new Key(service, target));
        try {
            return policies.get(service).run(attempt -> {
                if (attempt > 1) {
                    listener.outageWaited(service, target, attempt - 1);
                }
                try {
                    T result = action.run(attempt);
                    w.answered();
                    return result;
                } catch (RuntimeException e) {
                    if (Outages.isOutageOf(service, e)) {
                        w.failed(e);
                    } else {
                        w.answered();
                    }
                    throw e;
                }
            });
        } finally {
            w.leave();
        }
    }

    /**
     * A probe for loops that keep their own cadence (claiming, the heartbeat, coordination): each of their tries of
     * {@code target} reports here, so an outage is logged once and ended by their next success.
     */
    public Probe probe(Service service, String target) {
        return new Probe(new Waiter(new Key(service, target)));
    }

    /** See {@link #probe}. Used by one thread. */
    public final class Probe {
        private final Waiter waiter;
        private int failures;

        private Probe(Waiter waiter) {
            this.waiter = waiter;
        }

        /**
         * Reports a failed try.
         *
         * @return whether it was an outage of the probe's service (noted; logged only when it begins)
         */
        public boolean failed(RuntimeException e) {
            if (!Outages.isOutageOf(waiter.key.service(), e)) {
                answered();
                return false;
            }
            failures++;
            waiter.failed(e);
            if (failures > 1) {
                listener.outageWaited(waiter.key.service(), waiter.key.target(), failures - 1);
            }
            return true;
        }

        /** Reports a successful try: an outage this probe waited for ends. */
        public void answered() {
            failures = 0;
            waiter.answered();
            waiter.leave();
        }

        /** Consecutive outage failures so far (0 after a success). */
        public int failures() {
            return failures;
        }
    }

    /** One operation's part in an outage: joins it on its first failure, ends it when it succeeds. */
    private final class Waiter {
        final Key key;
        private Outage joined;

        Waiter(Key key) {
            this.key = key;
        }

        public void failed(RuntimeException e) {
            String error = describe(e);
            Outage fresh = new Outage(error);
            Outage o = current.putIfAbsent(key, fresh);
            if (o == null) {
                o = fresh;
                began(key, o); // after it is in the map, so the status rows published now include it
            } else {
                o.error = error;
            }
            if (joined != o) {
                leave();
                joined = o;
                o.waiters.incrementAndGet();
            }
        }

        /** The service answered this operation: the outage it waited for (if still current) is over. */
        public void answered() {
            Outage o = joined;
            if (o != null && current.remove(key, o)) {
                ended(key, o, true);
            }
        }

        /** This operation waits no more (it succeeded, failed otherwise, or was cancelled). */
        void leave() {
            Outage o = joined;
            joined = null;
            if (o != null && o.waiters.decrementAndGet() == 0 && current.remove(key, o)) {
                // The last operation waiting for it gave up (cancelled): nobody waits for the service any more.
                ended(key, o, false);
            }
        }
    }

    private void began(Key k, Outage o) {
        // Warnings reach a worker's stderr; the end is logged at the same level so whoever saw one sees the other.
        LOG.warn(
                "waiting for {} {} since {}: {}; its chunks keep their attempts and carry on once it answers",
                k.service().described(),
                k.target(),
                o.since.truncatedTo(ChronoUnit.SECONDS),
                o.error);
        listener.outageBegan(k.service(), k.target(), o.since, o.error);
        changed.run();
    }

    private void ended(Key k, Outage o, boolean answered) {
        Duration lasted = Duration.ofNanos(System.nanoTime() - o.started);
        if (answered) {
            LOG.warn(
                    "{} {} answers again after {} s of waiting; carrying on",
                    k.service().described(),
                    k.target(),
                    lasted.toSeconds());
        } else {
            LOG.info(
                    "no longer waiting for {} {} after {} s (the operations waiting for it stopped)",
                    k.service().described(),
                    k.target(),
                    lasted.toSeconds());
        }
        listener.outageEnded(k.service(), k.target(), lasted);
        changed.run();
    }

    /** The failure's message, one line, masked and bounded: what the log and the status rows show. */
    static String describe(Throwable e) {
        String m = e.getMessage() == null ? LocalTransactions.rootMessage(e) : e.getMessage();
        int nl = m.indexOf('\n');
        m = Secrets.mask(nl < 0 ? m : m.substring(0, nl));
        return m.length() <= MAX_ERROR ? m : m.substring(0, MAX_ERROR - 3) + "...";
    }
}
