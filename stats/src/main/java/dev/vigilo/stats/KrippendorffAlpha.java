package dev.vigilo.stats;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Objects;
import java.util.OptionalDouble;

/**
 * Krippendorff's alpha with the interval metric (squared difference): the agreement of several judges scoring the same
 * cases, some judgements missing (K. Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011). A unit is one
 * case's scores (one per judge that scored it, in any order); a unit with m_u &gt;= 2 scores is pairable, the others
 * contribute nothing. With n the number of pairable scores:
 *
 * <pre>
 *   alpha = 1 - D_o / D_e
 *   D_o = (1/n) sum_u sum_{i != j in u} (v_i - v_j)^2 / (m_u - 1)          (observed disagreement)
 *   D_e = sum_{i != j over all n pairable scores} (v_i - v_j)^2 / (n (n - 1))  (expected disagreement)
 * </pre>
 *
 * <p>It is computed from {@link Sums}, sufficient statistics that add up: with S = sum v, Q = sum v^2 over the
 * pairable scores and, for any set of m values, sum_{i != j} (v_i - v_j)^2 = 2 (m Q - S^2),
 *
 * <pre>
 *   W     = sum_u 2 (m_u Q_u - S_u^2) / (m_u - 1)        (the within-unit disagreement, summed over units)
 *   alpha = 1 - (W / n) / (2 (n Q - S^2) / (n (n - 1))) = 1 - (n - 1) W / (2 (n Q - S^2))
 * </pre>
 *
 * <p>so each chunk of a run contributes its {@code Sums} and settlement adds them, without per-case data. alpha is 1
 * for perfect agreement, 0 for agreement at chance (one unit alone always gives 0) and negative for systematic
 * disagreement. It is undefined (empty) when n &lt; 2 and when D_e = 0, i.e. all pairable scores are equal: there is
 * no variation to measure agreement against (0/0), and reporting 1 would claim an agreement the data cannot show
 * (judges that give every case the same score agree trivially), so the report says "undefined" instead.
 */
public final class KrippendorffAlpha {

    private KrippendorffAlpha() {}

    /**
     * The sufficient statistics of alpha over some units: {@code n} pairable scores, their sum, the sum of their
     * squares and the within-unit disagreement W (see {@link KrippendorffAlpha}). Scores are held exactly (every double
     * is a decimal fraction) so that sums of parts equal the sum of the whole whatever the order of addition, and
     * all-equal scores give D_e exactly 0; each unit's W term, a division by m_u - 1, is rounded once to 34
     * significant digits ({@link MathContext#DECIMAL128}; exact for two scores a unit). Values are normalised
     * (trailing zeros stripped), so equal sums are {@code equals}. Immutable.
     *
     * @param n            the pairable scores (those of units with two or more)
     * @param sum          S, their sum
     * @param sumOfSquares Q, the sum of their squares
     * @param disagreement W, sum over units of sum_{i != j in u} (v_i - v_j)^2 / (m_u - 1)
     */
    public record Sums(long n, BigDecimal sum, BigDecimal sumOfSquares, BigDecimal disagreement) {

        /** No units. */
        public static final Sums ZERO = new Sums(0, BigDecimal.ZERO, BigDecimal.ZERO, BigDecimal.ZERO);

        private static final BigDecimal TWO = BigDecimal.valueOf(2);

        /**
         * Checks signs and normalises the decimals.
         *
         * @throws IllegalArgumentException for a negative n, sum of squares or disagreement
         */
        public Sums {
            Objects.requireNonNull(sum, "sum");
            Objects.requireNonNull(sumOfSquares, "sumOfSquares");
            Objects.requireNonNull(disagreement, "disagreement");
            if (n < 0 || sumOfSquares.signum() < 0 || disagreement.signum() < 0) {
                throw new IllegalArgumentException("need n, the sum of squares and the disagreement >= 0, got " + n
                        + ", " + sumOfSquares + ", " + disagreement);
            }
            sum = sum.stripTrailingZeros();
            sumOfSquares = sumOfSquares.stripTrailingZeros();
            disagreement = disagreement.stripTrailingZeros();
        }

        /**
         * The sums of one unit: one case's scores, one per judge that scored it (missing ones left out). Fewer than two
         * scores are not pairable: {@link #ZERO}.
         *
         * @throws IllegalArgumentException for a score that is not finite
         */
        public static Sums ofUnit(double... values) {
            Objects.requireNonNull(values, "values");
            for (double v : values) {
                if (!Double.isFinite(v)) {
                    throw new IllegalArgumentException("a judge's score must be finite, got " + v);
                }
            }
            if (values.length < 2) {
                return ZERO;
            }
            BigDecimal s = BigDecimal.ZERO;
            BigDecimal q = BigDecimal.ZERO;
            for (double v : values) {
                BigDecimal d = new BigDecimal(v);
                s = s.add(d);
                q = q.add(d.multiply(d));
            }
            BigDecimal m = BigDecimal.valueOf(values.length);
            BigDecimal pairs = TWO.multiply(m.multiply(q).subtract(s.multiply(s)));
            BigDecimal w = pairs.divide(BigDecimal.valueOf(values.length - 1L), MathContext.DECIMAL128);
            return new Sums(values.length, s, q, w);
        }

        /**
         * The sums of both parts together (exact: addition in any order gives the same sums).
         *
         * @throws ArithmeticException if n overflows a long
         */
        public Sums plus(Sums other) {
            Objects.requireNonNull(other, "other");
            return new Sums(
                    Math.addExact(n, other.n),
                    sum.add(other.sum),
                    sumOfSquares.add(other.sumOfSquares),
                    disagreement.add(other.disagreement));
        }
    }

    /**
     * alpha from the sums of all units, rounded to the nearest double; empty when undefined: n &lt; 2 or D_e = 0 (all
     * pairable scores equal).
     *
     * @throws IllegalArgumentException for sums no scores have (n Q &lt; S^2)
     */
    public static OptionalDouble of(Sums sums) {
        Objects.requireNonNull(sums, "sums");
        if (sums.n() < 2) {
            return OptionalDouble.empty();
        }
        BigDecimal n = BigDecimal.valueOf(sums.n());
        // n Q - S^2 = n^2 (n - 1) D_e / 2: exact, so it is 0 exactly when all the scores are equal.
        BigDecimal spread = n.multiply(sums.sumOfSquares()).subtract(sums.sum().multiply(sums.sum()));
        if (spread.signum() < 0) {
            throw new IllegalArgumentException("inconsistent sums: n * sum of squares < sum^2 for " + sums);
        }
        if (spread.signum() == 0) {
            return OptionalDouble.empty();
        }
        BigDecimal ratio = n.subtract(BigDecimal.ONE)
                .multiply(sums.disagreement())
                .divide(Sums.TWO.multiply(spread), MathContext.DECIMAL128);
        return OptionalDouble.of(BigDecimal.ONE.subtract(ratio).doubleValue());
    }
}
