package dev.vigilo.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.math.BigDecimal;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class WilsonTest {
    private static final Confidence C95 = Confidence.DEFAULT;

    @Test
    void matchesIndependentlyComputedIntervals() {
        // x, n, rate, stderr, low, high at 0.95: mpmath at 50 digits (src/test/python/reference_values.py)
        double[][] reference = {
            {0, 1, 0.0, 0.0, 0.0, 0.79345068562276261},
            {1, 1, 1.0, 0.0, 0.20654931437723739, 1.0},
            {0, 10, 0.0, 0.0, 0.0, 0.27753279986288925},
            {10, 10, 1.0, 0.0, 0.72246720013711075, 1.0},
            {7, 10, 0.7, 0.14491376746189439, 0.39677814746114532, 0.89220873259369898},
            {1, 2, 0.5, 0.35355339059327376, 0.094531205734230713, 0.90546879426576929},
            {50, 100, 0.5, 0.05, 0.40383153036599563, 0.59616846963400437},
            {999, 1000, 0.999, 0.00099949987493746091, 0.99435744140204206, 0.99982345362937392},
            {1, 1000000, 1.0e-6, 9.99999499999875e-7, 1.7652457674537147e-7, 5.664911804311443e-6},
            {81, 100, 0.81, 0.039230090491866062, 0.72221154620935623, 0.87485248490231265},
            {9, 10, 0.9, 0.09486832980505138, 0.5958499732047615, 0.9821237869049271},
        };
        for (double[] row : reference) {
            ProportionInterval i = Wilson.interval((long) row[0], (long) row[1], C95);
            String as = (long) row[0] + "/" + (long) row[1];
            assertThat(i.rate()).as(as).isEqualTo(row[2]);
            assertThat(i.stderr()).as(as).isCloseTo(row[3], within(1e-15));
            assertThat(i.low()).as(as).isCloseTo(row[4], within(1e-14));
            assertThat(i.high()).as(as).isCloseTo(row[5], within(1e-14));
            assertThat(i.confidence()).isEqualTo(C95);
        }
        // At other levels: x, n, level, low, high
        double[][] levels = {
            {7, 10, 0.5, 0.59530925061251097, 0.78728513715962136},
            {0, 3, 0.5, 0.0, 0.13167721989766633},
            {3, 3, 0.5, 0.86832278010233367, 1.0},
            {7, 10, 0.999, 0.24964159432874263, 0.94241157055973652},
            {0, 3, 0.999, 0.0, 0.78304207964197253},
            {3, 3, 0.999, 0.21695792035802747, 1.0},
        };
        for (double[] row : levels) {
            ProportionInterval i = Wilson.interval((long) row[0], (long) row[1], Confidence.of(row[2]));
            assertThat(i.low()).as("%s", row[2]).isCloseTo(row[3], within(1e-14));
            assertThat(i.high()).as("%s", row[2]).isCloseTo(row[4], within(1e-14));
        }
    }

    @Test
    void handWorkedSevenOfTen() {
        // p = 0.7, z^2 = 3.841459, z^2/n = 0.3841459: centre = (0.7 + 0.1920730) / 1.3841459 = 0.644493,
        // half = 1.959964 * sqrt(0.021 + 0.0096036) / 1.3841459 = 1.959964 * 0.174939 / 1.3841459 = 0.247715
        ProportionInterval i = Wilson.interval(7, 10, C95);
        assertThat((i.low() + i.high()) / 2).isCloseTo(0.644493, within(1e-6));
        assertThat((i.high() - i.low()) / 2).isCloseTo(0.247715, within(1e-6));
        assertThat(i.stderr()).isCloseTo(Math.sqrt(0.021), within(1e-15));
    }

    @Test
    void agreesWithADecimalImplementation() {
        SplittableRandom random = new SplittableRandom(23);
        Confidence[] levels = {Confidence.of(0.5), Confidence.of(0.9), C95, Confidence.of(0.999)};
        for (int t = 0; t < 2000; t++) {
            long n = t < 200 ? 1 + t % 20 : 1 + random.nextLong(t < 1000 ? 1000 : 100_000_000L);
            long x = random.nextLong(n + 1);
            Confidence c = levels[t % levels.length];
            ProportionInterval i = Wilson.interval(x, n, c);
            BigDecimal[] exact = Exact.wilson(x, n, c.z());
            assertThat(i.low()).as(x + "/" + n).isCloseTo(exact[0].doubleValue(), within(1e-14));
            assertThat(i.high()).as(x + "/" + n).isCloseTo(exact[1].doubleValue(), within(1e-14));
            assertThat(i.low()).isLessThanOrEqualTo(i.rate());
            assertThat(i.high()).isGreaterThanOrEqualTo(i.rate());
        }
    }

    @Test
    void edgesAreExact() {
        for (long n : new long[] {1, 2, 7, 1000, 123_456_789}) {
            assertThat(Wilson.interval(0, n, C95).low()).isZero();
            assertThat(Wilson.interval(0, n, C95).stderr()).isZero();
            assertThat(Wilson.interval(n, n, C95).high()).isEqualTo(1.0);
            assertThat(Wilson.interval(n, n, C95).rate()).isEqualTo(1.0);
        }
        // n = 0: nothing known.
        ProportionInterval none = Wilson.interval(0, 0, C95);
        assertThat(none.rate()).isZero();
        assertThat(none.stderr()).isZero();
        assertThat(none.low()).isZero();
        assertThat(none.high()).isEqualTo(1.0);
    }

    @Test
    void refusesImpossibleCounts() {
        assertThatThrownBy(() -> Wilson.interval(3, 2, C95)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Wilson.interval(-1, 2, C95)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ProportionInterval(1, 2, 0.5, 0.35, 0.6, 0.9, C95))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
