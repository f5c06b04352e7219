package dev.vigilo.stats;

import org.apache.commons.statistics.distribution.BinomialDistribution;

/**
 * The exact two-sided McNemar test of two runs A and B over the same cases, from the discordant pairs: b =
 * {@code aOnly} cases passed in A only, c = {@code bOnly} passed in B only. Under the null hypothesis (both runs pass
 * a case equally often) each discordant pair is a fair coin, so with m = b + c:
 *
 * <pre>
 *   p = min(1, 2 * sum_{i = 0 .. min(b, c)} C(m, i) / 2^m),   p = 1 when m = 0
 * </pre>
 *
 * <p>The sum is the binomial(m, 1/2) distribution function at min(b, c), computed by Apache Commons Statistics
 * through the regularized incomplete beta function, so it stays accurate for m in the millions (no binomial
 * coefficients or powers of two are formed; a p-value below the smallest double is 0). (Commons Statistics'
 * {@code BinomialTest} is not used: its two-sided p-value drops one of the two equal central terms for some odd m,
 * e.g. 0.83 instead of 1 for b = 10, c = 11.)
 *
 * @param aOnly  b, cases passed in A and not in B; 0 &lt;= b
 * @param bOnly  c, cases passed in B and not in A; 0 &lt;= c, b + c &lt;= {@link Integer#MAX_VALUE}
 * @param pValue the exact two-sided p-value
 */
public record McNemar(long aOnly, long bOnly, double pValue) {

    /** Checks the counts and the p-value's range. */
    public McNemar {
        requireCounts(aOnly, bOnly);
        if (!(pValue >= 0.0 && pValue <= 1.0)) {
            throw new IllegalArgumentException("a p-value is between 0 and 1, got " + pValue);
        }
    }

    /**
     * The test of {@code aOnly} against {@code bOnly} discordant pairs.
     *
     * @throws IllegalArgumentException for a negative count or b + c &gt; {@link Integer#MAX_VALUE}
     */
    public static McNemar test(long aOnly, long bOnly) {
        requireCounts(aOnly, bOnly);
        int m = (int) (aOnly + bOnly);
        if (m == 0) {
            return new McNemar(aOnly, bOnly, 1.0);
        }
        double tail = BinomialDistribution.of(m, 0.5).cumulativeProbability((int) Math.min(aOnly, bOnly));
        return new McNemar(aOnly, bOnly, Math.min(1.0, 2.0 * tail));
    }

    private static void requireCounts(long aOnly, long bOnly) {
        if (aOnly < 0 || bOnly < 0 || aOnly > Integer.MAX_VALUE - bOnly) {
            throw new IllegalArgumentException("need 0 <= a_only, b_only and a_only + b_only <= " + Integer.MAX_VALUE
                    + ", got " + aOnly + ", " + bOnly);
        }
    }

    /** Whether the difference is significant at the confidence level: p &lt; 1 - level ({@link Confidence#alpha()}). */
    public boolean significant(Confidence confidence) {
        return pValue < confidence.alpha();
    }
}
