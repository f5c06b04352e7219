package dev.vigilo.fleet;

import dev.vigilo.common.errors.DatabaseErrors;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cost budget shared by every process that spends from it (datagen's {@code budget: {max_cost}}, one per
 * experiment; docs/datagen.md, "Fleet limits and budget"), and the one owner of its table {@code fleet_budgets}
 * (control migration V27).
 *
 * <p>A call is admitted ({@link #reserve}) only while the budget's {@code charged} is below its limit, and charges
 * its reservation (an upper bound of its cost) in the same transaction, the row locked; when it ends, {@link #settle}
 * replaces the reservation by what the call cost. So {@code charged} = settled cost + the reservations of calls not
 * settled, and any number of processes together charge at most the limit plus one reservation (the last call
 * admitted below the limit), as long as each reservation bounds its call. A process that dies leaves its unsettled
 * reservations charged whole: the endpoint may have answered those calls, and no one can know. Durable: a rerun
 * reads what earlier runs spent. One round trip to the control database per admission and per settlement (a
 * datagen call takes far longer). Thread-safe.
 */
public final class CostBudget {
    private static final Logger LOG = LoggerFactory.getLogger(CostBudget.class);

    /**
     * A budget's row.
     *
     * @param maxCost the limit in force (the last admitting process's)
     * @param charged settled cost plus the reservations of calls not settled
     * @param settled what the calls that ended cost
     * @param calls calls admitted
     */
    public record State(BigDecimal maxCost, BigDecimal charged, BigDecimal settled, long calls) {
        /** What unsettled calls hold (in flight now, or lost with a process that died). */
        public BigDecimal reserved() {
            return charged.subtract(settled);
        }

        /** Whether no further call may be admitted. */
        public boolean reached() {
            return charged.compareTo(maxCost) >= 0;
        }
    }

    /** An admitted call's reservation, settled once. */
    public static final class Charge {
        private final BigDecimal reserved;
        private boolean settled;

        private Charge(BigDecimal reserved) {
            this.reserved = reserved;
        }

        /** The amount reserved. */
        public BigDecimal reserved() {
            return reserved;
        }
    }

    private final Jdbi control;
    private final String key;
    private final String scope;
    private final BigDecimal maxCost;

    /**
     * The budget named {@code key} with the limit {@code maxCost} (which this process writes to the row at each
     * admission: a rerun with a larger limit raises it).
     *
     * @param scope what the key stands for, for people
     */
    public CostBudget(Jdbi control, String key, String scope, BigDecimal maxCost) {
        this.control = Objects.requireNonNull(control, "control");
        this.key = Objects.requireNonNull(key, "key");
        this.scope = Objects.requireNonNull(scope, "scope");
        this.maxCost = Objects.requireNonNull(maxCost, "maxCost");
        if (maxCost.signum() < 0) {
            throw new IllegalArgumentException("maxCost must be >= 0");
        }
    }

    /** A budget key: the sha256 (hex) of {@code parts}, one per line. */
    public static String key(String... parts) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(d.digest(String.join("\n", parts).getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /** The limit this process applies. */
    public BigDecimal maxCost() {
        return maxCost;
    }

    /**
     * Admits a call reserving {@code reservation}, or refuses it.
     *
     * @throws BudgetReachedException charged already reaches the limit: nothing was reserved
     * @throws dev.vigilo.common.errors.UnavailableException the control database is unavailable
     */
    public Charge reserve(BigDecimal reservation) {
        Objects.requireNonNull(reservation, "reservation");
        State s = transaction(h -> {
            State now = lockedRow(h);
            if (now.reached()) {
                return now;
            }
            h.createUpdate("UPDATE fleet_budgets SET max_cost = :max, charged = charged + :r, calls = calls + 1,"
                            + " updated_at = :now WHERE budget_key = :k")
                    .bind("max", maxCost)
                    .bind("r", reservation)
                    .bind("now", Timestamp.from(Instant.now()))
                    .bind("k", key)
                    .execute();
            return null;
        });
        if (s != null) {
            throw new BudgetReachedException(scope, s);
        }
        return new Charge(reservation);
    }

    /**
     * Replaces an admitted call's reservation by what it cost (call once; later calls do nothing). A failure to
     * write is logged and leaves the reservation charged (more than was spent, never less).
     */
    public void settle(Charge charge, BigDecimal cost) {
        synchronized (charge) {
            if (charge.settled) {
                return;
            }
            charge.settled = true;
        }
        try {
            control.useTransaction(h -> h.createUpdate("UPDATE fleet_budgets SET charged = charged - :r + :c,"
                            + " settled = settled + :c, updated_at = :now WHERE budget_key = :k")
                    .bind("r", charge.reserved)
                    .bind("c", cost)
                    .bind("now", Timestamp.from(Instant.now()))
                    .bind("k", key)
                    .execute());
        } catch (RuntimeException e) {
            LOG.warn(
                    "budget of {}: a call's cost was not settled, its reservation stays charged: {}",
                    scope,
                    e.getMessage());
        }
    }

    /** The budget's row now (empty before its first call). */
    public Optional<State> state() {
        return read(control, key);
    }

    /** Budget {@code key}'s row, if any call was ever admitted under it. */
    public static Optional<State> read(Jdbi control, String key) {
        return control.withHandle(h -> h.createQuery(
                        "SELECT max_cost, charged, settled, calls FROM fleet_budgets" + " WHERE budget_key = :k")
                .bind("k", key)
                .map((rs, ctx) -> new State(
                        rs.getBigDecimal("max_cost"),
                        rs.getBigDecimal("charged"),
                        rs.getBigDecimal("settled"),
                        rs.getLong("calls")))
                .findOne());
    }

    private State lockedRow(Handle h) {
        h.createUpdate("INSERT INTO fleet_budgets (budget_key, scope, max_cost, charged, settled, calls, updated_at)"
                        + " VALUES (:k, :scope, :max, 0, 0, 0, :now) ON CONFLICT (budget_key) DO NOTHING")
                .bind("k", key)
                .bind("scope", scope)
                .bind("max", maxCost)
                .bind("now", Timestamp.from(Instant.now()))
                .execute();
        State s = h.createQuery("SELECT charged, settled, calls FROM fleet_budgets WHERE budget_key = :k FOR UPDATE")
                .bind("k", key)
                .map((rs, ctx) -> new State(
                        maxCost, rs.getBigDecimal("charged"), rs.getBigDecimal("settled"), rs.getLong("calls")))
                .one();
        return s;
    }

    private <T> T transaction(org.jdbi.v3.core.HandleCallback<T, RuntimeException> work) {
        try {
            return control.inTransaction(work);
        } catch (RuntimeException e) {
            throw DatabaseErrors.unavailable(e, "control database", "run the same command again")
                    .map(RuntimeException.class::cast)
                    .orElseThrow(() -> e);
        }
    }
}
