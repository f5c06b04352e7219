package dev.vigilo.stats;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * The unbiased pass@k estimator (Chen et al. 2021, "Evaluating Large Language Models Trained on Code") and pass^k,
 * per case and averaged over a gate's executed cases. For a case with c passing epochs out of n:
 *
 * <pre>
 *   pass@k = 1 - C(n - c, k) / C(n, k)   (the chance that at least one of k epochs drawn without replacement passes;
 *                                         = 1 when n - c &lt; k)
 *          = 1 - prod_{i = n-c+1 .. n} (1 - k / i)      (how it is computed: no large binomial coefficients)
 *   pass^k = C(c, k) / C(n, k)           (the chance that all k drawn epochs pass; = 0 when c &lt; k)
 *          = prod_{i = 0 .. k-1} (c - i) / (n - i)
 * </pre>
 *
 * <p>An instance holds a histogram of epoch pass counts: {@code histogram[c]} = the number of cases with c passing
 * epochs out of n = {@code histogram.length - 1}. Histograms of parts (chunks, shards) add up exactly as integers, so
 * the estimate is computed once from the sum: pass@k = sum_c histogram[c] pass@k(n, c) / sum_c histogram[c]. With no
 * cases every estimate is 0. Immutable.
 */
public final class PassAtK {

    private final long[] histogram;
    private final long cases;

    private PassAtK(long[] histogram, long cases) {
        this.histogram = histogram;
        this.cases = cases;
    }

    /**
     * The estimates over {@code histogram} (copied): {@code histogram[c]} cases had c of n passing epochs, n =
     * {@code histogram.length - 1}.
     *
     * @throws IllegalArgumentException for fewer than two entries (n &gt;= 1), a negative entry, or more than
     *     {@link Long#MAX_VALUE} cases in all
     */
    public static PassAtK of(long[] histogram) {
        Objects.requireNonNull(histogram, "histogram");
        if (histogram.length < 2) {
            throw new IllegalArgumentException(
                    "a pass@k histogram needs entries for 0..n passing epochs, n >= 1; got " + histogram.length);
        }
        long cases = 0;
        for (int c = 0; c < histogram.length; c++) {
            if (histogram[c] < 0) {
                throw new IllegalArgumentException("histogram[" + c + "] is negative: " + histogram[c]);
            }
            cases = Math.addExact(cases, histogram[c]);
        }
        return new PassAtK(histogram.clone(), cases);
    }

    /**
     * pass@k of one case with {@code c} passing epochs out of {@code n}.
     *
     * @throws IllegalArgumentException unless {@code 0 <= c <= n} and {@code 1 <= k <= n}
     */
    public static double perCase(int n, int c, int k) {
        requireArguments(n, c, k);
        if (n - c < k) {
            return 1.0;
        }
        double allFail = 1.0;
        for (int i = n - c + 1; i <= n; i++) {
            allFail *= 1.0 - (double) k / i;
        }
        return 1.0 - allFail;
    }

    /**
     * pass^k of one case with {@code c} passing epochs out of {@code n}: all of k epochs drawn without replacement
     * pass.
     *
     * @throws IllegalArgumentException unless {@code 0 <= c <= n} and {@code 1 <= k <= n}
     */
    public static double allPerCase(int n, int c, int k) {
        requireArguments(n, c, k);
        if (c < k) {
            return 0.0;
        }
        double all = 1.0;
        for (int i = 0; i < k; i++) {
            all *= (double) (c - i) / (n - i);
        }
        return all;
    }

    private static void requireArguments(int n, int c, int k) {
        if (n < 1 || c < 0 || c > n || k < 1 || k > n) {
            throw new IllegalArgumentException("need 0 <= c <= n and 1 <= k <= n, got n=" + n + " c=" + c + " k=" + k);
        }
    }

    /** n, the epochs per case. */
    public int epochs() {
        return histogram.length - 1;
    }

    /** The number of cases the histogram counts. */
    public long cases() {
        return cases;
    }

    /** {@code histogram[c]}: the cases with c passing epochs, {@code 0 <= c <= n}. */
    public long casesWithPasses(int c) {
        if (c < 0 || c > epochs()) {
            throw new IllegalArgumentException("need 0 <= c <= n (" + epochs() + "), got " + c);
        }
        return histogram[c];
    }

    /** pass@k averaged over the cases (0 with no cases), {@code 1 <= k <= n}. */
    public double passAt(int k) {
        return average(k, true);
    }

    /** pass^k averaged over the cases (0 with no cases), {@code 1 <= k <= n}. */
    public double passAll(int k) {
        return average(k, false);
    }

    /** pass@k for k = 1..n, element k - 1 for k. */
    public List<Double> passAtK() {
        List<Double> out = new ArrayList<>(epochs());
        for (int k = 1; k <= epochs(); k++) {
            out.add(passAt(k));
        }
        return Collections.unmodifiableList(out);
    }

    private double average(int k, boolean any) {
        int n = epochs();
        if (k < 1 || k > n) {
            throw new IllegalArgumentException("need 1 <= k <= n (" + n + "), got " + k);
        }
        if (cases == 0) {
            return 0.0;
        }
        double sum = 0.0;
        for (int c = 0; c <= n; c++) {
            if (histogram[c] != 0) {
                sum += histogram[c] * (any ? perCase(n, c, k) : allPerCase(n, c, k));
            }
        }
        return Math.min(1.0, sum / cases);
    }

    /** The histogram: element c counts the cases with c passing epochs (a copy). */
    public long[] histogram() {
        return histogram.clone();
    }

    /** Equal when the histograms are. */
    @Override
    public boolean equals(Object other) {
        return other instanceof PassAtK p && java.util.Arrays.equals(p.histogram, histogram);
    }

    @Override
    public int hashCode() {
        return java.util.Arrays.hashCode(histogram);
    }

    @Override
    public String toString() {
        return "PassAtK" + java.util.Arrays.toString(histogram);
    }
}
