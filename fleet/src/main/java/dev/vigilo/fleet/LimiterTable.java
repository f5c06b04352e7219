package dev.vigilo.fleet;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * The one owner of {@code endpoint_limiters} and {@code endpoint_limiter_holders} (created by exec's control migration
 * V18 before this module existed, and by this module's V27 where V18 did not run): a lease is one short transaction
 * of the caller's handle that locks the limiter's row, applies {@link LimiterState#step} at the database's clock (one
 * clock for every machine), writes the row back and the caller's in-flight slots. Callers that record which of their
 * endpoints use a limiter (exec's {@code run_endpoint_limiters}) join the row through {@link #columns} and {@link
 * #read}.
 */
public final class LimiterTable {
    /** A holder row's lifetime: a process renews it every second while it holds slots; a crashed one's lapse. */
    public static final Duration HOLDER_TTL = Duration.ofSeconds(15);

    private static final String COLUMNS = "limiter_key, endpoint, requests_per_minute, tokens_per_minute,"
            + " max_in_flight, breaker_failures, cool_down_seconds, rate_factor, rate_reason, rate_changed_at,"
            + " latency_baseline_ms, request_permits, token_permits, refilled_at, paused_until, circuit,"
            + " consecutive_failures, circuit_since, circuit_reason, open_until, probe_holder, probe_until";

    private LimiterTable() {}

    /** Creates the limiter's row if it is missing (full buckets, closed circuit); the caller commits. */
    public static void ensure(Handle h, String key, String endpoint, LimiterState.Limits limits) {
        Instant now = now(h);
        write(h, LimiterState.fresh(key, endpoint, limits, now), now, true);
    }

    /**
     * One lease (call in a transaction): the row locked, {@code report} folded in, {@code want} granted as far as the
     * fleet allows, the holder's in-flight slots written.
     */
    public static LimiterState.Step lease(
            Handle h,
            String key,
            String endpoint,
            UUID holder,
            LimiterState.Limits limits,
            LimiterState.Report report,
            LimiterState.Want want) {
        Instant now = now(h);
        Optional<LimiterState> row = locked(h, key);
        LimiterState state;
        if (row.isEmpty()) {
            write(h, LimiterState.fresh(key, endpoint, limits, now), now, true);
            state = locked(h, key).orElseThrow();
        } else {
            state = row.get();
        }
        int others = h.createQuery("SELECT COALESCE(SUM(in_flight), 0) FROM endpoint_limiter_holders"
                        + " WHERE limiter_key = :k AND holder <> :h AND expires_at > :now")
                .bind("k", key)
                .bind("h", holder)
                .bind("now", Timestamp.from(now))
                .mapTo(Integer.class)
                .one();
        LimiterState.Step step = state.step(now, holder, limits, report, want, others);
        write(h, step.state(), now, false);
        if (step.grant().inFlight() > 0) {
            h.createUpdate("INSERT INTO endpoint_limiter_holders (limiter_key, holder, in_flight, expires_at)"
                            + " VALUES (:k, :h, :n, :exp) ON CONFLICT (limiter_key, holder)"
                            + " DO UPDATE SET in_flight = :n, expires_at = :exp")
                    .bind("k", key)
                    .bind("h", holder)
                    .bind("n", step.grant().inFlight())
                    .bind("exp", Timestamp.from(now.plus(HOLDER_TTL)))
                    .execute();
        } else {
            release(h, key, holder);
        }
        return step;
    }

    /** Gives the holder's in-flight slots back (a process closing its limiters). */
    public static void release(Handle h, String key, UUID holder) {
        h.createUpdate("DELETE FROM endpoint_limiter_holders WHERE limiter_key = :k AND holder = :h")
                .bind("k", key)
                .bind("h", holder)
                .execute();
    }

    /** The fleet's in-flight slots of a limiter held by live holders. */
    public static int inFlight(Handle h, String key) {
        return h.createQuery("SELECT COALESCE(SUM(in_flight), 0) FROM endpoint_limiter_holders"
                        + " WHERE limiter_key = :k AND expires_at > clock_timestamp()")
                .bind("k", key)
                .mapTo(Integer.class)
                .one();
    }

    /** The limiter row's columns, each prefixed with {@code alias.}, for a caller's join; read with {@link #read}. */
    public static String columns(String alias) {
        StringBuilder b = new StringBuilder();
        for (String c : COLUMNS.split(",\\s*")) {
            if (b.length() > 0) {
                b.append(", ");
            }
            b.append(alias).append('.').append(c);
        }
        return b.toString();
    }

    private static Instant now(Handle h) {
        return h.createQuery("SELECT clock_timestamp()")
                .mapTo(Timestamp.class)
                .one()
                .toInstant();
    }

    private static Optional<LimiterState> locked(Handle h, String key) {
        return h.createQuery("SELECT " + COLUMNS + " FROM endpoint_limiters WHERE limiter_key = :k FOR UPDATE")
                .bind("k", key)
                .map((rs, ctx) -> read(rs))
                .findOne();
    }

    private static void write(Handle h, LimiterState s, Instant now, boolean insertOnly) {
        String values = ":k, :endpoint, :rpm, :tpm, :mif, :bf, :cool, :factor, :reason, :changed, :baseline, :rp, :tp,"
                + " :refilled, :paused, :circuit, :failures, :since, :creason, :open, :prober, :probeUntil";
        String sql = insertOnly
                ? "INSERT INTO endpoint_limiters (" + COLUMNS + ", updated_at) VALUES (" + values
                        + ", :now) ON CONFLICT (limiter_key) DO NOTHING"
                : "UPDATE endpoint_limiters SET endpoint = :endpoint, requests_per_minute = :rpm,"
                        + " tokens_per_minute = :tpm, max_in_flight = :mif, breaker_failures = :bf,"
                        + " cool_down_seconds = :cool, rate_factor = :factor, rate_reason = :reason,"
                        + " rate_changed_at = :changed, latency_baseline_ms = :baseline, request_permits = :rp,"
                        + " token_permits = :tp, refilled_at = :refilled, paused_until = :paused, circuit = :circuit,"
                        + " consecutive_failures = :failures, circuit_since = :since, circuit_reason = :creason,"
                        + " open_until = :open, probe_holder = :prober, probe_until = :probeUntil, updated_at = :now"
                        + " WHERE limiter_key = :k";
        LimiterState.Limits l = s.limits();
        h.createUpdate(sql)
                .bind("k", s.key())
                .bind("endpoint", s.endpoint())
                .bindByType("rpm", l.requestsPerMinute() == 0 ? null : l.requestsPerMinute(), Integer.class)
                .bindByType("tpm", l.tokensPerMinute() == 0 ? null : l.tokensPerMinute(), Integer.class)
                .bindByType("mif", l.maxInFlight() == 0 ? null : l.maxInFlight(), Integer.class)
                .bind("bf", l.failures())
                .bind("cool", (int) l.coolDown().toSeconds())
                .bind("factor", s.rateFactor())
                .bind("reason", s.rateReason())
                .bind("changed", Timestamp.from(s.rateChangedAt()))
                .bindByType("baseline", s.latencyBaselineMs().orElse(null), Double.class)
                .bind("rp", s.requestPermits())
                .bind("tp", s.tokenPermits())
                .bind("refilled", Timestamp.from(s.refilledAt()))
                .bindByType("paused", s.pausedUntil().map(Timestamp::from).orElse(null), Timestamp.class)
                .bind("circuit", s.circuit().wire())
                .bind("failures", s.consecutiveFailures())
                .bind("since", Timestamp.from(s.circuitSince()))
                .bind("creason", s.circuitReason())
                .bindByType("open", s.openUntil().map(Timestamp::from).orElse(null), Timestamp.class)
                .bindByType("prober", s.probeHolder().orElse(null), UUID.class)
                .bindByType("probeUntil", s.probeUntil().map(Timestamp::from).orElse(null), Timestamp.class)
                .bind("now", Timestamp.from(now))
                .execute();
    }

    /** A limiter row of a query selecting {@link #columns}. */
    public static LimiterState read(ResultSet rs) throws SQLException {
        Double baseline = rs.getObject("latency_baseline_ms", Double.class);
        return new LimiterState(
                rs.getString("limiter_key"),
                rs.getString("endpoint"),
                new LimiterState.Limits(
                        rs.getInt("requests_per_minute"),
                        rs.getInt("tokens_per_minute"),
                        rs.getInt("max_in_flight"),
                        rs.getInt("breaker_failures"),
                        Duration.ofSeconds(rs.getInt("cool_down_seconds"))),
                rs.getDouble("rate_factor"),
                rs.getString("rate_reason"),
                rs.getTimestamp("rate_changed_at").toInstant(),
                Optional.ofNullable(baseline),
                rs.getDouble("request_permits"),
                rs.getDouble("token_permits"),
                rs.getTimestamp("refilled_at").toInstant(),
                instant(rs, "paused_until"),
                LimiterState.Circuit.ofWire(rs.getString("circuit")),
                rs.getInt("consecutive_failures"),
                rs.getTimestamp("circuit_since").toInstant(),
                rs.getString("circuit_reason"),
                instant(rs, "open_until"),
                Optional.ofNullable(rs.getObject("probe_holder", UUID.class)),
                instant(rs, "probe_until"));
    }

    private static Optional<Instant> instant(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? Optional.empty() : Optional.of(t.toInstant());
    }
}
