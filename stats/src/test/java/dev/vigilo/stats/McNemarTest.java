package dev.vigilo.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.math.BigDecimal;
import java.math.BigInteger;
import org.junit.jupiter.api.Test;

class McNemarTest {

    /** min(1, 2 sum_{i <= min(b, c)} C(b + c, i) / 2^(b + c)) in exact integers, then divided at 60 digits. */
    private static double exact(int b, int c) {
        int m = b + c;
        if (m == 0) {
            return 1.0;
        }
        BigInteger sum = BigInteger.ZERO;
        BigInteger term = BigInteger.ONE; // C(m, 0)
        for (int i = 0; i <= Math.min(b, c); i++) {
            sum = sum.add(term);
            term = term.multiply(BigInteger.valueOf(m - i)).divide(BigInteger.valueOf(i + 1));
        }
        BigDecimal p = new BigDecimal(sum.shiftLeft(1)).divide(new BigDecimal(BigInteger.ONE.shiftLeft(m)), Exact.MC);
        return p.min(BigDecimal.ONE).doubleValue();
    }

    @Test
    void handWorked() {
        assertThat(McNemar.test(0, 0).pValue()).isEqualTo(1.0);
        assertThat(McNemar.test(0, 1).pValue()).isEqualTo(1.0); // 2 * 1/2
        assertThat(McNemar.test(0, 10).pValue()).isEqualTo(2.0 / 1024); // 2 * C(10, 0) / 2^10
        assertThat(McNemar.test(10, 0).pValue()).isEqualTo(2.0 / 1024);
        assertThat(McNemar.test(1, 5).pValue()).isCloseTo(14.0 / 64, within(1e-16)); // 2 (1 + 6) / 64
        assertThat(McNemar.test(3, 3).pValue()).isEqualTo(1.0);
        // b + c odd with |b - c| = 1: 2 * P(X <= 10) = 1 for m = 21 (Commons' BinomialTest says 0.83).
        assertThat(McNemar.test(10, 11).pValue()).isEqualTo(1.0);
    }

    @Test
    void matchesIndependentlyComputedValues() {
        // b, c, p: exact rationals (Python) and, beyond 5000 pairs, SciPy's binomial cdf
        // (src/test/python/reference_values.py)
        double[][] reference = {
            {5, 20, 0.0040773153305053711},
            {1000, 1200, 2.1817026407914711e-5},
            {1200, 1000, 2.1817026407914711e-5},
            {1500000, 1502000, 0.24860731946645095},
            {1000000, 1003000, 0.034088365079432},
            {1000000, 1010000, 1.7539685614366628e-12},
        };
        for (double[] row : reference) {
            McNemar test = McNemar.test((long) row[0], (long) row[1]);
            assertThat(test.pValue()).as("%s / %s", row[0], row[1]).isCloseTo(row[2], within(row[2] * 1e-9));
            assertThat(test.aOnly()).isEqualTo((long) row[0]);
            assertThat(test.bOnly()).isEqualTo((long) row[1]);
        }
    }

    @Test
    void agreesWithExactIntegerSums() {
        for (int b = 0; b <= 40; b++) {
            for (int c = 0; c <= 40; c++) {
                assertThat(McNemar.test(b, c).pValue()).as("%d / %d", b, c).isCloseTo(exact(b, c), within(1e-13));
            }
        }
        int[][] larger = {{1000, 1200}, {1200, 1000}, {2500, 2600}, {100, 300}, {4000, 4100}, {0, 3000}};
        for (int[] bc : larger) {
            double expected = exact(bc[0], bc[1]);
            assertThat(McNemar.test(bc[0], bc[1]).pValue())
                    .as("%d / %d", bc[0], bc[1])
                    .isCloseTo(expected, within(Math.max(expected * 1e-10, Double.MIN_NORMAL)));
        }
    }

    @Test
    void symmetricAndMonotone() {
        for (int b = 0; b < 30; b++) {
            for (int c = 0; c < 30; c++) {
                assertThat(McNemar.test(b, c).pValue())
                        .isEqualTo(McNemar.test(c, b).pValue());
            }
            assertThat(McNemar.test(b, b + 5).pValue())
                    .isGreaterThan(McNemar.test(b, b + 6).pValue());
        }
    }

    @Test
    void significanceAtTheConfidenceLevel() {
        assertThat(McNemar.test(0, 10).significant(Confidence.DEFAULT)).isTrue(); // 0.00195 < 0.05
        assertThat(McNemar.test(1, 5).significant(Confidence.DEFAULT)).isFalse(); // 0.219
        assertThat(McNemar.test(1, 5).significant(Confidence.of(0.5))).isTrue(); // 0.219 < 0.5
        assertThat(McNemar.test(0, 0).significant(Confidence.of(0.5))).isFalse();
    }

    @Test
    void refusesImpossibleCounts() {
        assertThatThrownBy(() -> McNemar.test(-1, 2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> McNemar.test(Integer.MAX_VALUE, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(McNemar.test(Integer.MAX_VALUE, 0).pValue()).isZero();
        assertThatThrownBy(() -> new McNemar(1, 1, 1.5)).isInstanceOf(IllegalArgumentException.class);
    }
}
