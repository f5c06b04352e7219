package dev.vigilo.stats;

/**
 * The Wilson score interval of a proportion (Wilson 1927), the interval of every pass rate Vigilo reports. For x
 * passes out of n, p = x / n and z = {@link Confidence#z()}:
 *
 * <pre>
 *   centre     = (p + z^2 / 2n) / (1 + z^2 / n)
 *   half-width = z sqrt(p (1 - p) / n + z^2 / 4n^2) / (1 + z^2 / n)
 *   low = centre - half-width,  high = centre + half-width
 *   stderr     = sqrt(p (1 - p) / n)
 * </pre>
 *
 * <p>The bounds are the two roots in π of n (p - π)^2 = z^2 π (1 - π). They are clamped to [0, 1]; for x = 0 the
 * lower bound is exactly 0 and for x = n the upper bound exactly 1 (where rounding would leave a few units in the
 * last place). Unlike the Wald interval (p ± z stderr) it behaves at p = 0, p = 1 and small n.
 *
 * <p>n = 0 (nothing counted) is defined as rate 0, stderr 0 and the whole interval [0, 1]: nothing is known.
 */
public final class Wilson {

    private Wilson() {}

    /**
     * The pass rate of {@code passed} out of {@code total} with its standard error and Wilson interval.
     *
     * @throws IllegalArgumentException unless {@code 0 <= passed <= total}
     */
    public static ProportionInterval interval(long passed, long total, Confidence confidence) {
        requireCounts(passed, total);
        if (total == 0) {
            return new ProportionInterval(0, 0, 0.0, 0.0, 0.0, 1.0, confidence);
        }
        double p = (double) passed / total;
        double[] bounds = bounds(p, total, confidence.z());
        return new ProportionInterval(
                passed, total, p, Math.sqrt(p * (1 - p) / total), bounds[0], bounds[1], confidence);
    }

    /**
     * The Wilson bounds {low, high} at the rate {@code p} over {@code n > 0} cases: clamped to [0, p] and [p, 1], low
     * exactly 0 at p = 0 and high exactly 1 at p = 1. {@code p} need not be a multiple of 1/n ({@link BoundDecision}
     * asks what more cases at the observed rate would give); this is the one computation of both.
     */
    static double[] bounds(double p, double n, double z) {
        double z2 = z * z;
        double denominator = 1.0 + z2 / n;
        double centre = (p + z2 / (2.0 * n)) / denominator;
        double halfWidth = z * Math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denominator;
        double low = p == 0.0 ? 0.0 : Math.max(0.0, Math.min(centre - halfWidth, p));
        double high = p == 1.0 ? 1.0 : Math.min(1.0, Math.max(centre + halfWidth, p));
        return new double[] {low, high};
    }

    static void requireCounts(long passed, long total) {
        if (passed < 0 || total < 0 || passed > total) {
            throw new IllegalArgumentException("need 0 <= passed <= total, got " + passed + " of " + total);
        }
    }
}
