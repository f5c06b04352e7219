package dev.vigilo.plan;

import dev.vigilo.common.crash.RandomKills;
import java.time.Duration;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * Reads a run's creation lease (held by a run's creator, and by an admission) straight from the control database,
 * for kill tests that wait for a dead holder's lease or watch a claim change hands. Stateless.
 */
public final class CreationLeases {
    private CreationLeases() {}

    /** The run's creation lease owner (a new one with every claim), or null when nobody holds it or no run row exists. */
    public static String owner(Jdbi jdbi, UUID run) {
        return jdbi.withHandle(h -> h.createQuery("SELECT creation_owner::text FROM runs WHERE run_id = :r")
                .bind("r", run)
                .mapTo(String.class)
                .findOne()
                .orElse(null));
    }

    /**
     * Polls until the run's creation lease ends within {@code marginMillis} (a child JVM's start-up), or there is no
     * lease (no owner's expiry, or no run row yet).
     *
     * @param holder who held it, for the timeout's message ("the dead creator")
     */
    public static void awaitEnd(Jdbi jdbi, UUID run, long marginMillis, Duration timeout, String holder)
            throws InterruptedException {
        RandomKills.await(
                timeout,
                "the end of " + holder + "'s lease",
                () -> jdbi.withHandle(h -> h.createQuery(
                                "SELECT creation_lease_expires_at IS NULL OR creation_lease_expires_at"
                                        + " <= clock_timestamp() + make_interval(secs => :m) FROM runs WHERE run_id = :r")
                        .bind("m", marginMillis / 1000.0)
                        .bind("r", run)
                        .mapTo(Boolean.class)
                        .findOne()
                        .orElse(true)));
    }
}
