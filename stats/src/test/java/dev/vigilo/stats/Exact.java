package dev.vigilo.stats;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;

/** Second implementations of the formulas in 60-digit decimal arithmetic, for the tests to compare against. */
final class Exact {
    static final MathContext MC = new MathContext(60, RoundingMode.HALF_EVEN);

    private Exact() {}

    static BigDecimal d(double v) {
        return new BigDecimal(v);
    }

    static BigDecimal d(long v) {
        return BigDecimal.valueOf(v);
    }

    /** {low, high} of the Wilson interval of x out of n > 0 at the quantile z, clamped to [0, 1]. */
    static BigDecimal[] wilson(long x, long n, double zDouble) {
        return wilson(d(x).divide(d(n), MC), d(n), zDouble);
    }

    static BigDecimal[] wilson(BigDecimal p, BigDecimal n, double zDouble) {
        BigDecimal z = d(zDouble);
        BigDecimal z2 = z.multiply(z, MC);
        BigDecimal two = BigDecimal.valueOf(2);
        BigDecimal four = BigDecimal.valueOf(4);
        BigDecimal denominator = BigDecimal.ONE.add(z2.divide(n, MC), MC);
        BigDecimal centre = p.add(z2.divide(two.multiply(n), MC), MC).divide(denominator, MC);
        BigDecimal variance = p.multiply(BigDecimal.ONE.subtract(p), MC)
                .divide(n, MC)
                .add(z2.divide(four.multiply(n).multiply(n), MC), MC);
        BigDecimal half = z.multiply(variance.sqrt(MC), MC).divide(denominator, MC);
        BigDecimal low = centre.subtract(half, MC).max(BigDecimal.ZERO);
        BigDecimal high = centre.add(half, MC).min(BigDecimal.ONE);
        return new BigDecimal[] {low, high};
    }

    static BigInteger binomial(int n, int k) {
        if (k < 0 || k > n) {
            return BigInteger.ZERO;
        }
        BigInteger r = BigInteger.ONE;
        for (int i = 0; i < k; i++) {
            r = r.multiply(BigInteger.valueOf(n - i)).divide(BigInteger.valueOf(i + 1));
        }
        return r;
    }

    static double ratio(BigInteger numerator, BigInteger denominator) {
        return new BigDecimal(numerator).divide(new BigDecimal(denominator), MC).doubleValue();
    }
}
