package dev.vigilo.stats;

import org.apache.commons.statistics.distribution.NormalDistribution;

/**
 * A profile's {@code confidence}: the confidence level of every interval a report gives, from 0.5 to 0.999
 * (default 0.95), with its two-sided standard normal quantile {@link #z()}. Immutable; equal when the levels are.
 */
public final class Confidence {

    /** The lowest level a profile may ask for. */
    public static final double MIN = 0.5;
    /** The highest level a profile may ask for. */
    public static final double MAX = 0.999;
    /** The default level, 0.95 (z = 1.959963984540054). */
    public static final Confidence DEFAULT = of(0.95);

    private static final NormalDistribution STANDARD_NORMAL = NormalDistribution.of(0, 1);

    private final double level;
    private final double z;

    private Confidence(double level) {
        this.level = level;
        // The upper (1 - level) / 2 tail, read from the survival function so that levels near 1 lose no digits.
        this.z = STANDARD_NORMAL.inverseSurvivalProbability((1.0 - level) / 2.0);
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
     * The two-sided standard normal quantile of the level: z with P(|Z| <= z) = level, i.e. the (1 + level) / 2
     * quantile (1.959963984540054 for 0.95, 0.6744897501960817 for 0.5), from Apache Commons Statistics.
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
