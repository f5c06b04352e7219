package dev.vigilo.stats;

import java.math.BigDecimal;
import org.apache.commons.statistics.distribution.NormalDistribution;

/**
 * A profile's {@code confidence}: the confidence level of every interval a report gives, from 0.5 to 0.999
 * (default 0.95), with its two-sided standard normal quantile {@link #z()}. Immutable; equal when the levels are.
 */
public final class Confidence {

    // Before DEFAULT: static fields initialize in order.
    private static final NormalDistribution STANDARD_NORMAL = NormalDistribution.of(0, 1);

    /** The lowest level a profile may ask for. */
    public static final double MIN = 0.5;
    /** The highest level a profile may ask for. */
    public static final double MAX = 0.999;
    /** The default level, 0.95 (z = 1.95996398454005). */
    public static final Confidence DEFAULT = of(0.95);

    private final double level;
    private final double z;

    private Confidence(double level) {
        this.level = level;
        // The upper tail (1 - level) / 2, read from the survival function so that levels near 1 lose no digits, and
        // computed in decimal from the level as written (0.95, not the binary double nearest to it, whose tail
        // 0.025000000000000022 would give z one unit in the last place low).
        double tail = BigDecimal.ONE
                .subtract(BigDecimal.valueOf(level))
                .divide(BigDecimal.valueOf(2))
                .doubleValue();
        this.z = STANDARD_NORMAL.inverseSurvivalProbability(tail);
    }

    /**
     * The confidence level {@code level}.
     *
     * @throws IllegalArgumentException unless {@code 0.5 <= level <= 0.999}, with a message fit to follow the key's
     *     location in a profile error: {@code confidence must be between 0.5 and 0.999, got 1.0}
     */
    public static Confidence of(double level) {
        if (!(level >= MIN && level <= MAX)) {
            throw new IllegalArgumentException("confidence must be between 0.5 and 0.999, got " + level);
        }
        return new Confidence(level);
    }

    /** The level, e.g. 0.95. */
    public double level() {
        return level;
    }

    /**
     * The two-sided standard normal quantile of the level: z with P(|Z| &lt;= z) = level, i.e. the (1 + level) / 2
     * quantile (1.95996398454005 for 0.95, 0.674489750196082 for 0.5), from Apache Commons Statistics, within two
     * units in the last place of the exact value: the inverse survival function of the standard normal at (1 - level) / 2, that tail computed in decimal from the
     * level as written ({@link BigDecimal#valueOf(double)}).
     */
    public double z() {
        return z;
    }

    /** The significance level that goes with it, 1 - level (0.05 for 0.95, up to rounding). */
    public double alpha() {
        return 1.0 - level;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Confidence c && Double.compare(c.level, level) == 0;
    }

    @Override
    public int hashCode() {
        return Double.hashCode(level);
    }

    /** The level as a decimal, e.g. {@code 0.95}. */
    @Override
    public String toString() {
        return Double.toString(level);
    }
}
