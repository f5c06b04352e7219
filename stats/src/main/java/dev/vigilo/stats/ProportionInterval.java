package dev.vigilo.stats;

import java.util.Objects;

/**
 * A pass rate with its standard error and its confidence interval: {@code passed} of {@code total} cases. Built by
 * {@link Wilson#interval}; see there for the formulas and for {@code total = 0}.
 *
 * @param passed     x, the cases that passed, {@code 0 <= passed <= total}
 * @param total      n, the cases counted (for a gate: the planned cases)
 * @param rate       the point rate p = x / n (0 when n = 0)
 * @param stderr     sqrt(p (1 - p) / n) (0 when n = 0)
 * @param low        the interval's lower bound, in [0, rate]
 * @param high       the interval's upper bound, in [rate, 1]
 * @param confidence the interval's confidence level
 */
public record ProportionInterval(
        long passed, long total, double rate, double stderr, double low, double high, Confidence confidence) {

    /** Checks the counts and the order of the bounds. */
    public ProportionInterval {
        Objects.requireNonNull(confidence, "confidence");
        Wilson.requireCounts(passed, total);
        if (!(0.0 <= low && low <= rate && rate <= high && high <= 1.0)) {
            throw new IllegalArgumentException(
                    "need 0 <= low <= rate <= high <= 1, got " + low + ", " + rate + ", " + high);
        }
    }
}
