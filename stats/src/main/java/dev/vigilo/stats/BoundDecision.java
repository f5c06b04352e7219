package dev.vigilo.stats;

import java.util.Locale;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A gate decided on the bound ({@code decide: bound}): against its {@code min_pass_rate} m, a gate whose pass rate
 * has the interval [low, high] is
 *
 * <ul>
 *   <li>{@link #PASSED} when low &gt;= m (even the pessimistic rate meets the threshold),
 *   <li>{@link #FAILED} when high &lt; m (even the optimistic rate misses it),
 *   <li>{@link #INCONCLUSIVE} otherwise (the interval straddles m: more cases are needed).
 * </ul>
 *
 * <p>{@link #casesToDecide} says how many cases at the observed rate would decide an inconclusive gate.
 */
public enum BoundDecision {
    /** low &gt;= min_pass_rate. */
    PASSED,
    /** high &lt; min_pass_rate. */
    FAILED,
    /** low &lt; min_pass_rate &lt;= high. */
    INCONCLUSIVE;

    /** The largest number of cases {@link #casesToDecide} considers, 10^9; a gate needing more cannot be decided. */
    public static final long MAX_CASES = 1_000_000_000L;

    /**
     * The decision of {@code interval} against {@code minPassRate}.
     *
     * @throws IllegalArgumentException unless {@code 0 <= minPassRate <= 1}
     */
    public static BoundDecision of(ProportionInterval interval, double minPassRate) {
        Objects.requireNonNull(interval, "interval");
        requireRate(minPassRate);
        return decide(interval.low(), interval.high(), minPassRate);
    }

    private static BoundDecision decide(double low, double high, double minPassRate) {
        if (low >= minPassRate) {
            return PASSED;
        }
        if (high < minPassRate) {
            return FAILED;
        }
        return INCONCLUSIVE;
    }

    /**
     * For an inconclusive gate, the smallest number of cases n' &gt; n such that the Wilson interval at the same
     * observed rate p = x / n over n' cases decides it: low &gt;= m when p &gt; m (it would pass), high &lt; m when p
     * &lt; m (it would fail). More cases needed: n' - n.
     *
     * <p>Exact, not a closed-form approximation: the bounds are computed as {@link Wilson#interval} computes them
     * (at the real-valued rate p over n' cases) and n' found by bisection over (n, 10^9], which is exact because
     * the condition only gets easier as n' grows (mathematically it is n' (p - m)^2 &gt;= z^2 m (1 - m), resp.
     * &gt;).
     *
     * @return n', or empty when the interval is already decided, when n = 0 (no observed rate), when p = m (no number
     *     of cases decides a gate whose rate sits on its threshold) or when n' would exceed {@link #MAX_CASES}
     * @throws IllegalArgumentException unless {@code 0 <= minPassRate <= 1}
     */
    public static OptionalLong casesToDecide(ProportionInterval interval, double minPassRate) {
        if (of(interval, minPassRate) != INCONCLUSIVE || interval.total() == 0) {
            return OptionalLong.empty();
        }
        double p = interval.rate();
        if (p == minPassRate) {
            return OptionalLong.empty();
        }
        double z = interval.confidence().z();
        long lo = interval.total() + 1;
        long hi = MAX_CASES;
        if (lo > hi || !decidedAt(p, hi, z, minPassRate)) {
            return OptionalLong.empty();
        }
        // Invariant: decided at hi; lo is the smallest candidate not yet excluded.
        while (lo < hi) {
            long mid = lo + (hi - lo) / 2;
            if (decidedAt(p, mid, z, minPassRate)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return OptionalLong.of(lo);
    }

    private static boolean decidedAt(double p, long n, double z, double minPassRate) {
        double[] bounds = Wilson.bounds(p, n, z);
        return decide(bounds[0], bounds[1], minPassRate) != INCONCLUSIVE;
    }

    private static void requireRate(double minPassRate) {
        if (!(minPassRate >= 0.0 && minPassRate <= 1.0)) {
            throw new IllegalArgumentException("min_pass_rate must be between 0 and 1, got " + minPassRate);
        }
    }

    /** The decision as reports spell it: {@code passed}, {@code failed} or {@code inconclusive}. */
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }
}
