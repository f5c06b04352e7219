package dev.vigilo.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ConfidenceTest {

    @Test
    void zIsTheTwoSidedNormalQuantile() {
        // z(0.95) = 1.95996398454005423552... The nearest double is 1.9599639845400543; SciPy and R print
        // 1.959963984540054 (the double below), Commons Statistics gives 1.9599639845400545 (the double above): each
        // within two units in the last place of the exact value, which is what is asked of every level.
        assertThat(Confidence.DEFAULT.z()).isCloseTo(1.95996398454005423552, within(2 * Math.ulp(1.96)));
        assertThat(1.959963984540054).isCloseTo(1.95996398454005423552, within(2 * Math.ulp(1.96)));
        assertThat(Confidence.DEFAULT.z()).isEqualTo(Confidence.of(0.95).z());
        // level, z at the exact decimal level (mpmath, 50 digits; src/test/python/reference_values.py)
        double[][] reference = {
            {0.5, 0.67448975019608174},
            {0.8, 1.2815515655446005},
            {0.9, 1.6448536269514727},
            {0.95, 1.9599639845400542},
            {0.99, 2.5758293035489008},
            {0.999, 3.2905267314918948},
        };
        for (double[] row : reference) {
            assertThat(Confidence.of(row[0]).z()).as("z(%s)", row[0]).isCloseTo(row[1], within(2 * Math.ulp(row[1])));
        }
    }

    @Test
    void acceptsExactlyTheRangeOfAProfile() {
        assertThat(Confidence.of(0.5).level()).isEqualTo(0.5);
        assertThat(Confidence.of(0.999).level()).isEqualTo(0.999);
        for (double bad : new double[] {0.4999, 1.0, 0.9991, 0.0, -0.95, 95, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThatThrownBy(() -> Confidence.of(bad))
                    .as("%s", bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("confidence must be between 0.5 and 0.999, got " + bad);
        }
    }

    @Test
    void valueSemantics() {
        assertThat(Confidence.of(0.95)).isEqualTo(Confidence.DEFAULT).hasSameHashCodeAs(Confidence.DEFAULT);
        assertThat(Confidence.of(0.9)).isNotEqualTo(Confidence.DEFAULT);
        assertThat(Confidence.of(0.9).alpha()).isCloseTo(0.1, within(1e-15));
        assertThat(Confidence.of(0.99).toString()).isEqualTo("0.99");
    }
}
