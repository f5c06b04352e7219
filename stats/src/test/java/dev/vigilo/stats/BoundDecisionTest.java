package dev.vigilo.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BoundDecisionTest {
    private static final Confidence C95 = Confidence.DEFAULT;

    @Test
    void decidesOnTheBounds() {
        ProportionInterval nineOfTen = Wilson.interval(9, 10, C95); // [0.59585, 0.98212]
        assertThat(BoundDecision.of(nineOfTen, 0.5)).isEqualTo(BoundDecision.PASSED);
        assertThat(BoundDecision.of(nineOfTen, 0.6)).isEqualTo(BoundDecision.INCONCLUSIVE);
        assertThat(BoundDecision.of(nineOfTen, 0.9)).isEqualTo(BoundDecision.INCONCLUSIVE);
        assertThat(BoundDecision.of(nineOfTen, 0.99)).isEqualTo(BoundDecision.FAILED);
        ProportionInterval noneOfTen = Wilson.interval(0, 10, C95); // [0, 0.27753]
        assertThat(BoundDecision.of(noneOfTen, 0.3)).isEqualTo(BoundDecision.FAILED);
        assertThat(BoundDecision.of(noneOfTen, 0.0)).isEqualTo(BoundDecision.PASSED);
        assertThat(BoundDecision.of(Wilson.interval(10, 10, C95), 1.0)).isEqualTo(BoundDecision.INCONCLUSIVE);
        // n = 0: [0, 1] decides nothing but a threshold of 0.
        assertThat(BoundDecision.of(Wilson.interval(0, 0, C95), 0.5)).isEqualTo(BoundDecision.INCONCLUSIVE);
        assertThat(BoundDecision.of(Wilson.interval(0, 0, C95), 0.0)).isEqualTo(BoundDecision.PASSED);
    }

    @Test
    void lowOnTheThresholdPassesHighOnTheThresholdDoesNotFail() {
        ProportionInterval i = Wilson.interval(7, 10, C95);
        assertThat(BoundDecision.of(i, i.low())).isEqualTo(BoundDecision.PASSED);
        assertThat(BoundDecision.of(i, Math.nextUp(i.low()))).isEqualTo(BoundDecision.INCONCLUSIVE);
        assertThat(BoundDecision.of(i, i.high())).isEqualTo(BoundDecision.INCONCLUSIVE);
        assertThat(BoundDecision.of(i, Math.nextUp(i.high()))).isEqualTo(BoundDecision.FAILED);
    }

    @Test
    void casesToDecideHandWorked() {
        // 9 of 10 against 0.8: p = 0.9 > m, decided when N (p - m)^2 >= z^2 m (1 - m), N >= 3.841459 * 0.16 / 0.01
        // = 61.46: 62 cases.
        ProportionInterval nineOfTen = Wilson.interval(9, 10, C95);
        assertThat(BoundDecision.of(nineOfTen, 0.8)).isEqualTo(BoundDecision.INCONCLUSIVE);
        assertThat(BoundDecision.casesToDecide(nineOfTen, 0.8)).hasValue(62);
        assertThat(Wilson.bounds(0.9, 62, C95.z())[0]).isGreaterThanOrEqualTo(0.8);
        assertThat(Wilson.bounds(0.9, 61, C95.z())[0]).isLessThan(0.8);
        // 6 of 10 against 0.8: p = 0.6 < m, decided when N > 3.841459 * 0.16 / 0.04 = 15.37: 16 cases.
        ProportionInterval sixOfTen = Wilson.interval(6, 10, C95);
        assertThat(BoundDecision.of(sixOfTen, 0.8)).isEqualTo(BoundDecision.INCONCLUSIVE);
        assertThat(BoundDecision.casesToDecide(sixOfTen, 0.8)).hasValue(16);
        // 90 of 100 against 0.85, 99%: N >= 2.575829^2 * 0.1275 / 0.0025 = 338.38: 339 cases.
        ProportionInterval ninety = Wilson.interval(90, 100, Confidence.of(0.99));
        assertThat(BoundDecision.casesToDecide(ninety, 0.85)).hasValue(339);
    }

    @Test
    void casesToDecideIsNoneWhenNoNumberOfCasesDecides() {
        // The observed rate sits on the threshold.
        assertThat(BoundDecision.casesToDecide(Wilson.interval(8, 10, C95), 0.8))
                .isEmpty();
        assertThat(BoundDecision.casesToDecide(Wilson.interval(9, 10, C95), 0.9))
                .isEmpty();
        // No observed rate.
        assertThat(BoundDecision.casesToDecide(Wilson.interval(0, 0, C95), 0.5)).isEmpty();
        // Already decided.
        assertThat(BoundDecision.casesToDecide(Wilson.interval(9, 10, C95), 0.5))
                .isEmpty();
        assertThat(BoundDecision.casesToDecide(Wilson.interval(0, 10, C95), 0.5))
                .isEmpty();
        // Beyond 10^9: 50,001 of 100,000 against 0.5 needs about 9.6 * 10^9 cases.
        assertThat(BoundDecision.casesToDecide(Wilson.interval(50_001, 100_000, C95), 0.5))
                .isEmpty();
        assertThat(BoundDecision.casesToDecide(Wilson.interval(5_001, 10_000, C95), 0.5))
                .isEqualTo(exactCasesToDecide(5_001, 10_000, 0.5, C95.z()));
    }

    @Test
    void casesToDecideIsTheExactSmallestCount() {
        SplittableRandom random = new SplittableRandom(2023);
        double[] thresholds = {0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 0.1, 0.25};
        Confidence[] levels = {Confidence.of(0.5), Confidence.of(0.9), C95, Confidence.of(0.99), Confidence.of(0.999)};
        int checked = 0;
        for (int t = 0; t < 20_000 && checked < 3000; t++) {
            long n = 1 + random.nextLong(t % 2 == 0 ? 50 : 5000);
            long x = random.nextLong(n + 1);
            double m = t % 3 == 0 ? random.nextDouble() : thresholds[random.nextInt(thresholds.length)];
            Confidence c = levels[random.nextInt(levels.length)];
            ProportionInterval i = Wilson.interval(x, n, c);
            if (BoundDecision.of(i, m) != BoundDecision.INCONCLUSIVE) {
                continue;
            }
            checked++;
            assertThat(BoundDecision.casesToDecide(i, m))
                    .as("%d/%d at %s against %s", x, n, c, m)
                    .isEqualTo(exactCasesToDecide(x, n, m, c.z()));
        }
        assertThat(checked).isEqualTo(3000);
    }

    /**
     * The smallest N > n with N (p - m)^2 >= z^2 m (1 - m) (p > m) or > (p < m), p = x / n, in exact decimal
     * arithmetic on the doubles m and z: multiplied by n^2, N (x - m n)^2 against z^2 m (1 - m) n^2.
     */
    private static OptionalLong exactCasesToDecide(long x, long n, double mDouble, double zDouble) {
        BigDecimal m = Exact.d(mDouble);
        BigDecimal z = Exact.d(zDouble);
        BigDecimal gap = Exact.d(x).subtract(m.multiply(Exact.d(n)));
        if (gap.signum() == 0) {
            return OptionalLong.empty();
        }
        BigDecimal gap2 = gap.multiply(gap);
        BigDecimal target =
                z.multiply(z).multiply(m).multiply(BigDecimal.ONE.subtract(m)).multiply(Exact.d(n * n));
        // The quotient rounded up is exact (BigDecimal rounds the exact quotient); a strict bound met with equality
        // needs one more.
        BigDecimal smallest = target.divide(gap2, 0, RoundingMode.CEILING);
        if (gap.signum() < 0 && smallest.multiply(gap2).compareTo(target) == 0) {
            smallest = smallest.add(BigDecimal.ONE);
        }
        smallest = smallest.max(Exact.d(n + 1));
        return smallest.compareTo(Exact.d(BoundDecision.MAX_CASES)) > 0
                ? OptionalLong.empty()
                : OptionalLong.of(smallest.longValueExact());
    }

    @Test
    void refusesThresholdsOutsideZeroToOne() {
        ProportionInterval i = Wilson.interval(1, 2, C95);
        for (double bad : new double[] {-0.1, 1.1, Double.NaN}) {
            assertThatThrownBy(() -> BoundDecision.of(i, bad)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> BoundDecision.casesToDecide(i, bad)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void spellsDecisionsAsReportsDo() {
        assertThat(BoundDecision.PASSED.text()).isEqualTo("passed");
        assertThat(BoundDecision.FAILED.text()).isEqualTo("failed");
        assertThat(BoundDecision.INCONCLUSIVE.text()).isEqualTo("inconclusive");
    }
}
