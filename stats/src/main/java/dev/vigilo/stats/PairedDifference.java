package dev.vigilo.stats;

import java.math.BigInteger;
import java.util.Objects;

/**
 * The difference of two runs' pass rates over the same n cases, B - A, with a confidence interval by Newcombe's
 * method 10 (R. G. Newcombe, "Improved confidence intervals for the difference between binomial proportions based
 * on paired data", Statistics in Medicine 17 (1998) 2635-2650): the square-and-add combination of the two runs'
 * {@link Wilson} intervals, corrected for the correlation of paired outcomes.
 *
 * <p>From the 2x2 table of the cases: {@code both} passed in both runs, {@code aOnly} in A only, {@code bOnly} in B
 * only, {@code neither} in neither, n = their sum:
 *
 * <pre>
 *   pB = (both + bOnly) / n,  pA = (both + aOnly) / n,  D = pB - pA = (bOnly - aOnly) / n
 *   [lB, uB], [lA, uA] = the Wilson intervals of both + bOnly and both + aOnly out of n
 *   phi = N / sqrt((both + bOnly)(aOnly + neither)(both + aOnly)(bOnly + neither)),  N from A' = both neither - aOnly bOnly:
 *         N = A' - n/2 when A' &gt; n/2,  N = 0 when 0 &lt;= A' &lt;= n/2,  N = A' when A' &lt; 0;
 *         phi = 0 when the denominator is 0 (a margin is empty: one run passed all or none of the cases)
 *   low  = D - sqrt((pB - lB)^2 - 2 phi (pB - lB)(uA - pA) + (uA - pA)^2)
 *   high = D + sqrt((pA - lA)^2 - 2 phi (pA - lA)(uB - pB) + (uB - pB)^2)
 * </pre>
 *
 * <p>phi estimates the correlation of the two runs' outcomes (the phi coefficient of the table), with Newcombe's
 * correction: a positive association is reduced by n/2 in the numerator (not below 0), a negative one is kept. With
 * phi = 0 this is the square-and-add interval of independent samples; positive correlation narrows it. The bounds are
 * clamped to [-1, 1] (they lie there mathematically). n = 0 gives D = 0 and [-1, 1].
 *
 * @param both       cases passed in both runs
 * @param aOnly      cases passed in A only
 * @param bOnly      cases passed in B only
 * @param neither    cases passed in neither
 * @param difference D = pB - pA
 * @param low        the interval's lower bound
 * @param high       the interval's upper bound
 * @param confidence the interval's confidence level
 */
public record PairedDifference(
        long both,
        long aOnly,
        long bOnly,
        long neither,
        double difference,
        double low,
        double high,
        Confidence confidence) {

    /** Checks the counts and the order of the bounds. */
    public PairedDifference {
        Objects.requireNonNull(confidence, "confidence");
        total(both, aOnly, bOnly, neither);
        if (!(-1.0 <= low && low <= difference && difference <= high && high <= 1.0)) {
            throw new IllegalArgumentException(
                    "need -1 <= low <= difference <= high <= 1, got " + low + ", " + difference + ", " + high);
        }
    }

    /**
     * B - A with Newcombe's method 10 interval at {@code confidence}.
     *
     * @throws IllegalArgumentException for a negative count or a total beyond {@link Long#MAX_VALUE}
     */
    public static PairedDifference newcombe(long both, long aOnly, long bOnly, long neither, Confidence confidence) {
        long n = total(both, aOnly, bOnly, neither);
        if (n == 0) {
            return new PairedDifference(0, 0, 0, 0, 0.0, -1.0, 1.0, confidence);
        }
        ProportionInterval b = Wilson.interval(both + bOnly, n, confidence);
        ProportionInterval a = Wilson.interval(both + aOnly, n, confidence);
        double pB = b.rate();
        double pA = a.rate();
        double d = (double) (bOnly - aOnly) / n;
        double phi = phi(both, aOnly, bOnly, neither);
        double low = d - squareAndAdd(pB - b.low(), a.high() - pA, phi);
        double high = d + squareAndAdd(pA - a.low(), b.high() - pB, phi);
        low = Math.max(-1.0, Math.min(low, d));
        high = Math.min(1.0, Math.max(high, d));
        return new PairedDifference(both, aOnly, bOnly, neither, d, low, high, confidence);
    }

    private static double squareAndAdd(double x, double y, double phi) {
        return Math.sqrt(Math.max(0.0, x * x - 2.0 * phi * x * y + y * y));
    }

    /** Newcombe's corrected phi (see the class comment); 0 when a margin is empty. */
    static double phi(long both, long aOnly, long bOnly, long neither) {
        long bRow = both + bOnly;
        long bNotRow = aOnly + neither;
        long aCol = both + aOnly;
        long aNotCol = bOnly + neither;
        if (bRow == 0 || bNotRow == 0 || aCol == 0 || aNotCol == 0) {
            return 0.0;
        }
        long n = bRow + bNotRow;
        // A' = both * neither - aOnly * bOnly exactly; compared with n / 2 as 2A' against n.
        BigInteger cross = BigInteger.valueOf(both)
                .multiply(BigInteger.valueOf(neither))
                .subtract(BigInteger.valueOf(aOnly).multiply(BigInteger.valueOf(bOnly)));
        double numerator;
        if (cross.signum() < 0) {
            numerator = cross.doubleValue();
        } else if (cross.shiftLeft(1).compareTo(BigInteger.valueOf(n)) > 0) {
            numerator = cross.doubleValue() - n / 2.0;
        } else {
            numerator = 0.0;
        }
        double denominator = Math.sqrt((double) bRow)
                * Math.sqrt((double) bNotRow)
                * Math.sqrt((double) aCol)
                * Math.sqrt((double) aNotCol);
        return Math.max(-1.0, Math.min(1.0, numerator / denominator));
    }

    private static long total(long both, long aOnly, long bOnly, long neither) {
        if (both < 0 || aOnly < 0 || bOnly < 0 || neither < 0) {
            throw new IllegalArgumentException("the paired counts must not be negative, got " + both + ", " + aOnly
                    + ", " + bOnly + ", " + neither);
        }
        try {
            return Math.addExact(Math.addExact(both, aOnly), Math.addExact(bOnly, neither));
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("the paired counts add up beyond " + Long.MAX_VALUE, e);
        }
    }
}
