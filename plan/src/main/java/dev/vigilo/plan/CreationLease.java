package dev.vigilo.plan;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A creator's live hold on a run's preparation records ({@code creation_lease} in {@code run status --json}): when
 * it expires and how long until another creator may reclaim the run. Both come from the control database's clock,
 * the clock the lease is checked against. Rounded up, so the run is reclaimable at the instant shown.
 *
 * @param expiresAt            when the lease expires, rounded up to the whole second
 * @param reclaimableInSeconds seconds until then, rounded up, at least 1
 */
public record CreationLease(Instant expiresAt, long reclaimableInSeconds) {
    /**
     * Select-list columns over {@code runs} that {@link #held} reads: whether a creator holds a live lease, its expiry
     * and the database's current time (as epoch seconds with microseconds).
     */
    static final String COLUMNS = "creation_owner IS NOT NULL AND creation_lease_expires_at > clock_timestamp()"
            + " AS lease_live, extract(epoch FROM creation_lease_expires_at) AS lease_expires_epoch,"
            + " extract(epoch FROM clock_timestamp()) AS lease_now_epoch";

    public CreationLease {
        Objects.requireNonNull(expiresAt, "expiresAt");
        if (reclaimableInSeconds < 1) {
            throw new IllegalArgumentException(
                    "a held lease is reclaimable in at least 1 s, got " + reclaimableInSeconds);
        }
    }

    /** The lease a row selected with {@link #COLUMNS} shows, if a creator holds one. */
    static Optional<CreationLease> held(Map<String, Object> row) {
        if (!Boolean.TRUE.equals(row.get("lease_live"))) {
            return Optional.empty();
        }
        return Optional.of(of(decimal(row.get("lease_expires_epoch")), decimal(row.get("lease_now_epoch"))));
    }

    /** The lease expiring at {@code expiresEpoch}, seen at {@code nowEpoch} (epoch seconds, fractions allowed). */
    static CreationLease of(BigDecimal expiresEpoch, BigDecimal nowEpoch) {
        long expires = expiresEpoch.setScale(0, RoundingMode.CEILING).longValueExact();
        long remaining = expiresEpoch
                .subtract(nowEpoch)
                .setScale(0, RoundingMode.CEILING)
                .longValueExact();
        return new CreationLease(Instant.ofEpochSecond(expires), Math.max(1, remaining));
    }

    private static BigDecimal decimal(Object value) {
        return new BigDecimal(value.toString());
    }

    /** {@code reclaimable in 4m 12s, at 2026-11-30T05:47:18Z}: how long, then when (ISO-8601, UTC). */
    public String describe() {
        return "reclaimable in " + duration(reclaimableInSeconds) + ", at " + expiresAt;
    }

    /**
     * Why a claim is refused while this lease is held by {@code holder} (as seen from this process; not
     * {@link LeaseHolder.State#DEAD_HERE}, whose lease is taken over instead): {@code another <noun> holds the creation
     * lease (<holder>; reclaimable in ..., at ...); <what to do>}. A lease recorded without its holder (by an earlier
     * version) keeps the message it had.
     *
     * @param noun what the holder is called: {@code creator}, {@code process}
     */
    String refusal(String noun, Optional<LeaseHolder> holder) {
        String prefix = "another " + noun + " holds the creation lease (";
        if (holder.isEmpty()) {
            return prefix + describe() + "); wait for that " + noun + " to finish or, if it crashed, repeat the command"
                    + " then";
        }
        LeaseHolder.State state = holder.get().state();
        String who = holder.get().describe(state) + "; " + describe() + "); ";
        return state == LeaseHolder.State.ALIVE_HERE
                ? prefix + who + "wait for it to finish, or stop it and repeat the command (the lease of a " + noun
                        + " that no longer runs on this host is taken over at once)"
                : prefix + who + "wait for it to finish or, if it stopped answering, repeat the command then";
    }

    /** {@code 12s}, {@code 4m 12s}, {@code 1h 0m 5s}. */
    static String duration(long seconds) {
        long h = seconds / 3600;
        long m = seconds % 3600 / 60;
        long s = seconds % 60;
        if (h > 0) {
            return h + "h " + m + "m " + s + "s";
        }
        return m > 0 ? m + "m " + s + "s" : s + "s";
    }
}
