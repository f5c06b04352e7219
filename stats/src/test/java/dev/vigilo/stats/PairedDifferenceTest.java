package dev.vigilo.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.math.BigDecimal;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PairedDifferenceTest {
    private static final Confidence C95 = Confidence.DEFAULT;

    @Test
    void publishedExamples() {
        // Fagerland, Lydersen and Laake, "Statistical Analysis of Contingency Tables" (2017), chapter 8, Newcombe
        // square-and-add interval (the R package contingencytables prints and tests these four-digit figures).
        // Cavo et al. (2012), table [[59, 6], [16, 80]]: first - second = -0.0621 (-0.1186 to -0.0046); with A the
        // first and B the second, B - A = 0.0621 (0.0046 to 0.1186).
        PairedDifference cavo = PairedDifference.newcombe(59, 6, 16, 80, C95);
        assertThat(cavo.difference()).isCloseTo(0.0621, within(5e-5));
        assertThat(cavo.low()).isCloseTo(0.0046, within(5e-5));
        assertThat(cavo.high()).isCloseTo(0.1186, within(5e-5));
        // Bentur et al. (2009), table [[1, 1], [7, 12]]: -0.2857 (-0.5069 to -0.0256).
        PairedDifference bentur = PairedDifference.newcombe(1, 1, 7, 12, C95);
        assertThat(bentur.difference()).isCloseTo(0.2857, within(5e-5));
        assertThat(bentur.low()).isCloseTo(0.0256, within(5e-5));
        assertThat(bentur.high()).isCloseTo(0.5069, within(5e-5));
    }

    @Test
    void matchesIndependentlyComputedValues() {
        // both, aOnly, bOnly, neither, difference, low, high at 0.95: mpmath at 50 digits
        // (src/test/python/reference_values.py)
        double[][] reference = {
            {59, 6, 16, 80, 0.062111801242236025, 0.0046251139330500548, 0.11862119563870993},
            {1, 1, 7, 12, 0.28571428571428571, 0.025559124164859795, 0.50692022668614096},
            {36, 12, 2, 0, -0.2, -0.3404276029749407, -0.056929584003238811},
            {10, 0, 0, 0, 0.0, -0.27753279986288925, 0.27753279986288925},
            {5, 0, 0, 5, 0.0, -0.16659315708122265, 0.16659315708122265},
            {0, 3, 0, 0, -1.0, -1.0, -0.20592328245977819},
            {20, 30, 25, 25, -0.05, -0.19096570307131257, 0.09370430539815608},
            {1000, 1000, 1200, 7000, 0.019607843137254902, 0.01060033882735838, 0.028616001577609554},
        };
        for (double[] row : reference) {
            PairedDifference d =
                    PairedDifference.newcombe((long) row[0], (long) row[1], (long) row[2], (long) row[3], C95);
            String as = (long) row[0] + "," + (long) row[1] + "," + (long) row[2] + "," + (long) row[3];
            assertThat(d.difference()).as(as).isCloseTo(row[4], within(1e-15));
            assertThat(d.low()).as(as).isCloseTo(row[5], within(1e-13));
            assertThat(d.high()).as(as).isCloseTo(row[6], within(1e-13));
        }
    }

    @Test
    void phiAndItsCorrection() {
        // A' = both neither - aOnly bOnly. 5,0,0,5: A' = 25 > n/2 = 5, phi = (25 - 5) / sqrt(5^4) = 0.8.
        assertThat(PairedDifference.phi(5, 0, 0, 5)).isCloseTo(0.8, within(1e-15));
        // 59,6,16,80: A' = 4624 > 80.5, phi = 4543.5 / sqrt(75 * 86 * 65 * 96).
        assertThat(PairedDifference.phi(59, 6, 16, 80))
                .isCloseTo(4543.5 / Math.sqrt(75.0 * 86 * 65 * 96), within(1e-15));
        // 0 <= A' <= n/2: no correlation is assumed. 3,2,2,2: A' = 2 <= 4.5.
        assertThat(PairedDifference.phi(3, 2, 2, 2)).isZero();
        // n/2 exactly: 2,1,1,1, A' = 1, n = 5: 1 <= 2.5 gives 0; 3,1,1,2, A' = 5, n = 7: 5 - 3.5 = 1.5.
        assertThat(PairedDifference.phi(2, 1, 1, 1)).isZero();
        assertThat(PairedDifference.phi(3, 1, 1, 2)).isCloseTo(1.5 / Math.sqrt(4.0 * 3 * 4 * 3), within(1e-15));
        // A' < 0 is kept: 1,4,3,1: A' = 1 - 12 = -11, phi = -11 / sqrt(4 * 5 * 5 * 4).
        assertThat(PairedDifference.phi(1, 4, 3, 1)).isCloseTo(-11.0 / 20.0, within(1e-15));
        // An empty margin gives 0: both runs passed everything; B passed nothing; B passed everything.
        assertThat(PairedDifference.phi(10, 0, 0, 0)).isZero();
        assertThat(PairedDifference.phi(0, 3, 0, 0)).isZero();
        assertThat(PairedDifference.phi(4, 0, 3, 0)).isZero();
    }

    @Test
    void agreesWithADecimalImplementation() {
        SplittableRandom random = new SplittableRandom(1998);
        Confidence[] levels = {Confidence.of(0.5), Confidence.of(0.9), C95, Confidence.of(0.999)};
        for (int t = 0; t < 2000; t++) {
            int bound = t < 1000 ? 8 : 5000;
            long a = random.nextLong(bound);
            long b = random.nextLong(bound);
            long c = random.nextLong(bound);
            long d = random.nextLong(bound);
            if (a + b + c + d == 0) {
                continue;
            }
            Confidence level = levels[t % levels.length];
            PairedDifference actual = PairedDifference.newcombe(a, b, c, d, level);
            BigDecimal[] expected = newcombe(a, b, c, d, level.z());
            String as = a + "," + b + "," + c + "," + d + " at " + level;
            assertThat(actual.difference()).as(as).isCloseTo(expected[0].doubleValue(), within(1e-15));
            assertThat(actual.low()).as(as).isCloseTo(expected[1].doubleValue(), within(1e-13));
            assertThat(actual.high()).as(as).isCloseTo(expected[2].doubleValue(), within(1e-13));
            assertThat(actual.low()).isLessThanOrEqualTo(actual.difference());
            assertThat(actual.high()).isGreaterThanOrEqualTo(actual.difference());
        }
    }

    /** Newcombe's method 10 again, in 60-digit decimals: {difference, low, high}. */
    private static BigDecimal[] newcombe(long both, long aOnly, long bOnly, long neither, double z) {
        BigDecimal n = Exact.d(both + aOnly + bOnly + neither);
        BigDecimal pB = Exact.d(both + bOnly).divide(n, Exact.MC);
        BigDecimal pA = Exact.d(both + aOnly).divide(n, Exact.MC);
        BigDecimal[] wB = Exact.wilson(both + bOnly, both + aOnly + bOnly + neither, z);
        BigDecimal[] wA = Exact.wilson(both + aOnly, both + aOnly + bOnly + neither, z);
        BigDecimal margins = Exact.d(both + bOnly)
                .multiply(Exact.d(aOnly + neither))
                .multiply(Exact.d(both + aOnly))
                .multiply(Exact.d(bOnly + neither));
        BigDecimal phi = BigDecimal.ZERO;
        if (margins.signum() != 0) {
            BigDecimal cross = Exact.d(both)
                    .multiply(Exact.d(neither))
                    .subtract(Exact.d(aOnly).multiply(Exact.d(bOnly)));
            BigDecimal half = n.divide(BigDecimal.valueOf(2));
            BigDecimal numerator =
                    cross.compareTo(half) > 0 ? cross.subtract(half) : cross.signum() >= 0 ? BigDecimal.ZERO : cross;
            phi = numerator.divide(margins.sqrt(Exact.MC), Exact.MC);
        }
        BigDecimal difference = pB.subtract(pA);
        BigDecimal low = difference.subtract(squareAndAdd(pB.subtract(wB[0]), wA[1].subtract(pA), phi));
        BigDecimal high = difference.add(squareAndAdd(pA.subtract(wA[0]), wB[1].subtract(pB), phi));
        return new BigDecimal[] {difference, low, high};
    }

    private static BigDecimal squareAndAdd(BigDecimal x, BigDecimal y, BigDecimal phi) {
        BigDecimal two = BigDecimal.valueOf(2);
        BigDecimal sum = x.multiply(x)
                .subtract(two.multiply(phi).multiply(x).multiply(y))
                .add(y.multiply(y))
                .max(BigDecimal.ZERO);
        return sum.sqrt(Exact.MC);
    }

    @Test
    void edges() {
        PairedDifference none = PairedDifference.newcombe(0, 0, 0, 0, C95);
        assertThat(none.difference()).isZero();
        assertThat(none.low()).isEqualTo(-1.0);
        assertThat(none.high()).isEqualTo(1.0);
        // Identical runs: D = 0 and a symmetric interval.
        PairedDifference same = PairedDifference.newcombe(40, 0, 0, 60, C95);
        assertThat(same.difference()).isZero();
        assertThat(same.low()).isCloseTo(-same.high(), within(1e-15));
        // A passed everything, B nothing: D = -1, the lower bound stays -1.
        PairedDifference worst = PairedDifference.newcombe(0, 7, 0, 0, C95);
        assertThat(worst.difference()).isEqualTo(-1.0);
        assertThat(worst.low()).isEqualTo(-1.0);
        assertThat(worst.high()).isLessThan(0.0);
        // Swapping the runs mirrors the interval.
        PairedDifference ab = PairedDifference.newcombe(20, 3, 11, 9, C95);
        PairedDifference ba = PairedDifference.newcombe(20, 11, 3, 9, C95);
        assertThat(ba.difference()).isCloseTo(-ab.difference(), within(1e-15));
        assertThat(ba.low()).isCloseTo(-ab.high(), within(1e-15));
        assertThat(ba.high()).isCloseTo(-ab.low(), within(1e-15));
        assertThatThrownBy(() -> PairedDifference.newcombe(-1, 0, 0, 0, C95))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PairedDifference.newcombe(Long.MAX_VALUE, 1, 0, 0, C95))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
