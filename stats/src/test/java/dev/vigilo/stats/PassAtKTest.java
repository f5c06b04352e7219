package dev.vigilo.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.math.BigInteger;
import java.util.List;
import org.junit.jupiter.api.Test;

class PassAtKTest {

    @Test
    void handWorkedCase() {
        // n = 5, c = 2, k = 2: 1 - C(3, 2) / C(5, 2) = 1 - 3/10; pass^2 = C(2, 2) / C(5, 2) = 1/10.
        assertThat(PassAtK.perCase(5, 2, 2)).isCloseTo(0.7, within(1e-15));
        assertThat(PassAtK.allPerCase(5, 2, 2)).isCloseTo(0.1, within(1e-15));
        // k = 1 is the plain pass rate c / n.
        assertThat(PassAtK.perCase(10, 3, 1)).isCloseTo(0.3, within(1e-15));
        assertThat(PassAtK.allPerCase(10, 3, 1)).isCloseTo(0.3, within(1e-15));
    }

    @Test
    void matchesIndependentlyComputedValues() {
        // n, c, k, pass@k, pass^k: exact rationals printed by src/test/python/reference_values.py
        double[][] reference = {
            {5, 2, 2, 0.7, 0.1},
            {10, 3, 1, 0.3, 0.3},
            {10, 3, 5, 0.91666666666666667, 0.0},
            {10, 0, 3, 0.0, 0.0},
            {10, 10, 3, 1.0, 1.0},
            {100, 1, 1, 0.01, 0.01},
            {100, 50, 10, 0.99940658032741417, 0.00059341967258582875},
            {20, 15, 6, 1.0, 0.12912796697626419},
        };
        for (double[] row : reference) {
            int n = (int) row[0];
            int c = (int) row[1];
            int k = (int) row[2];
            assertThat(PassAtK.perCase(n, c, k)).as("pass@%d %d/%d", k, c, n).isCloseTo(row[3], within(1e-15));
            assertThat(PassAtK.allPerCase(n, c, k)).as("pass^%d %d/%d", k, c, n).isCloseTo(row[4], within(1e-15));
        }
    }

    @Test
    void agreesWithExactBinomialCoefficients() {
        for (int n : new int[] {1, 2, 3, 4, 5, 7, 10, 20, 33, 50, 64, 100}) {
            for (int c = 0; c <= n; c++) {
                for (int k = 1; k <= n; k++) {
                    BigInteger cnk = Exact.binomial(n, k);
                    double passAt = 1.0 - Exact.ratio(Exact.binomial(n - c, k), cnk);
                    double passAll = Exact.ratio(Exact.binomial(c, k), cnk);
                    assertThat(PassAtK.perCase(n, c, k))
                            .as("pass@%d %d/%d", k, c, n)
                            .isCloseTo(passAt, within(1e-14));
                    assertThat(PassAtK.allPerCase(n, c, k))
                            .as("pass^%d %d/%d", k, c, n)
                            .isCloseTo(passAll, within(1e-14));
                }
            }
        }
    }

    @Test
    void noPassesAndAllPassesAreExact() {
        for (int n = 1; n <= 100; n++) {
            for (int k = 1; k <= n; k++) {
                assertThat(PassAtK.perCase(n, 0, k)).isZero();
                assertThat(PassAtK.allPerCase(n, 0, k)).isZero();
                assertThat(PassAtK.perCase(n, n, k)).isEqualTo(1.0);
                assertThat(PassAtK.allPerCase(n, n, k)).isCloseTo(1.0, within(1e-15));
            }
            // pass@n: any epoch passed; pass^n: all did.
            assertThat(PassAtK.perCase(n, 1, n)).isEqualTo(1.0);
            if (n > 1) {
                assertThat(PassAtK.allPerCase(n, n - 1, n)).isZero();
            }
        }
        assertThat(PassAtK.perCase(1, 1, 1)).isEqualTo(1.0);
        assertThat(PassAtK.perCase(1, 0, 1)).isZero();
    }

    @Test
    void averagesOverAHistogram() {
        // 10 cases of 5 epochs: 3 with no pass, 2 with two, 5 with five.
        PassAtK estimate = PassAtK.of(new long[] {3, 0, 2, 0, 0, 5});
        assertThat(estimate.epochs()).isEqualTo(5);
        assertThat(estimate.cases()).isEqualTo(10);
        assertThat(estimate.casesWithPasses(2)).isEqualTo(2);
        // pass@1 = mean of c / n = (2 * 2 + 5 * 5) / 50 = 0.58; pass@2 = (2 * 0.7 + 5) / 10 = 0.64;
        // pass@5 = (2 + 5) / 10 = 0.7 (any passed); pass^5 = 5 / 10 (all passed); pass^2 = (2 * 0.1 + 5) / 10 = 0.52
        assertThat(estimate.passAt(1)).isCloseTo(0.58, within(1e-15));
        assertThat(estimate.passAt(2)).isCloseTo(0.64, within(1e-15));
        assertThat(estimate.passAt(5)).isCloseTo(0.7, within(1e-15));
        assertThat(estimate.passAll(5)).isCloseTo(0.5, within(1e-15));
        assertThat(estimate.passAll(2)).isCloseTo(0.52, within(1e-15));
        List<Double> all = estimate.passAtK();
        assertThat(all).hasSize(5);
        for (int k = 1; k <= 5; k++) {
            assertThat(all.get(k - 1)).isEqualTo(estimate.passAt(k));
        }
        // Non-decreasing in k.
        for (int k = 1; k < 5; k++) {
            assertThat(all.get(k)).isGreaterThanOrEqualTo(all.get(k - 1));
        }
    }

    @Test
    void histogramsOfPartsSumToTheWhole() {
        long[] chunkA = {1, 2, 0, 4};
        long[] chunkB = {0, 1, 3, 2};
        long[] sum = new long[4];
        for (int c = 0; c < 4; c++) {
            sum[c] = chunkA[c] + chunkB[c];
        }
        PassAtK whole = PassAtK.of(sum);
        // Per case, directly: 1 x c=0, 3 x c=1, 3 x c=2, 6 x c=3 over n = 3.
        for (int k = 1; k <= 3; k++) {
            double direct = (PassAtK.perCase(3, 0, k)
                            + 3 * PassAtK.perCase(3, 1, k)
                            + 3 * PassAtK.perCase(3, 2, k)
                            + 6 * PassAtK.perCase(3, 3, k))
                    / 13;
            assertThat(whole.passAt(k)).isCloseTo(direct, within(1e-15));
        }
        // The histogram is copied.
        sum[0] = 100;
        assertThat(whole.cases()).isEqualTo(13);
    }

    @Test
    void edges() {
        PassAtK empty = PassAtK.of(new long[] {0, 0, 0});
        assertThat(empty.cases()).isZero();
        assertThat(empty.passAt(1)).isZero();
        assertThat(empty.passAll(2)).isZero();
        PassAtK one = PassAtK.of(new long[] {0, 7});
        assertThat(one.passAtK()).containsExactly(1.0);
        assertThatThrownBy(() -> PassAtK.of(new long[] {1})).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PassAtK.of(new long[] {1, -1})).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PassAtK.of(new long[] {Long.MAX_VALUE, 1})).isInstanceOf(ArithmeticException.class);
        assertThatThrownBy(() -> one.passAt(2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> one.passAt(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> one.casesWithPasses(2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PassAtK.perCase(5, 6, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PassAtK.perCase(5, 2, 6)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PassAtK.perCase(0, 0, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
