package dev.vigilo.stats;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.List;
import java.util.Objects;

/**
 * A profile's {@code epochs.reducer}: how one evaluator's results over a case's epochs reduce to one
 * {@link Outcome}. Immutable; equal reducers have equal {@link #toString() canonical texts}.
 *
 * <table>
 *   <caption>The reducers and when the reduced outcome passes (n epochs, of which c passed)</caption>
 *   <tr><th>text</th><th>passes when</th></tr>
 *   <tr><td>{@code mean}</td><td>the mean of the epochs' scores is at least the evaluator's pass score</td></tr>
 *   <tr><td>{@code majority}</td><td>more than half of the epochs pass: 2c &gt; n</td></tr>
 *   <tr><td>{@code any}</td><td>at least one epoch passes: c &gt;= 1 (pass@n)</td></tr>
 *   <tr><td>{@code all}</td><td>every epoch passes: c = n (pass^n)</td></tr>
 *   <tr><td>{@code at_least:K}</td><td>at least K epochs pass: c &gt;= K, 1 &lt;= K &lt;= {@code epochs.count}</td></tr>
 * </table>
 *
 * <p>Whatever the reducer, the reduced score is the mean of the epochs' scores, and the reduced outcome is errored
 * (and not passed) when any epoch errored: an errored epoch never silently becomes a failure or a smaller sample.
 */
public final class Reducer {

    /** The reducer's name, the part of its text before any {@code :K}. */
    public enum Kind {
        /** {@code mean}: the mean score against the pass score. */
        MEAN("mean"),
        /** {@code majority}: more than half of the epochs pass. */
        MAJORITY("majority"),
        /** {@code any}: at least one epoch passes. */
        ANY("any"),
        /** {@code all}: every epoch passes. */
        ALL("all"),
        /** {@code at_least:K}: at least K epochs pass. */
        AT_LEAST("at_least");

        private final String text;

        Kind(String text) {
            this.text = text;
        }

        /** The name as a profile spells it. */
        public String text() {
            return text;
        }
    }

    /** What an unknown reducer's message lists. */
    static final String ALLOWED = "mean, majority, any, all or at_least:K";

    /** The default reducer, {@code mean}. */
    public static final Reducer MEAN = new Reducer(Kind.MEAN, 0);
    /** {@code majority}. */
    public static final Reducer MAJORITY = new Reducer(Kind.MAJORITY, 0);
    /** {@code any}. */
    public static final Reducer ANY = new Reducer(Kind.ANY, 0);
    /** {@code all}. */
    public static final Reducer ALL = new Reducer(Kind.ALL, 0);

    private final Kind kind;
    private final int k;

    private Reducer(Kind kind, int k) {
        this.kind = kind;
        this.k = k;
    }

    /**
     * Parses a profile's {@code epochs.reducer} for a profile of {@code epochCount} epochs. The text must be exactly
     * one of {@code mean}, {@code majority}, {@code any}, {@code all} or {@code at_least:K} with K a decimal integer
     * without leading zeros,
     * {@code 1 <= K <= epochCount} (no spaces, lower case).
     *
     * @throws IllegalArgumentException with a message fit to follow the key's location in a profile error, e.g.
     *     {@code at_least:K needs 1 <= K <= epochs.count (5), got 6}, or {@code unknown reducer 'median': expected
     *     mean, majority, any, all or at_least:K}
     */
    public static Reducer parse(String text, int epochCount) {
        Objects.requireNonNull(text, "text");
        requireEpochCount(epochCount);
        switch (text) {
            case "mean":
                return MEAN;
            case "majority":
                return MAJORITY;
            case "any":
                return ANY;
            case "all":
                return ALL;
            default:
                break;
        }
        String prefix = Kind.AT_LEAST.text() + ":";
        if (!text.startsWith(prefix)) {
            throw new IllegalArgumentException("unknown reducer '" + printable(text) + "': expected " + ALLOWED);
        }
        String digits = text.substring(prefix.length());
        boolean canonical = !digits.isEmpty()
                && digits.length() <= 9
                && digits.chars().allMatch(ch -> ch >= '0' && ch <= '9')
                && (digits.length() == 1 || digits.charAt(0) != '0');
        if (!canonical) {
            throw new IllegalArgumentException(
                    "at_least:K needs an integer K, got '" + printable(digits) + "' (expected " + ALLOWED + ")");
        }
        return atLeast(Integer.parseInt(digits), epochCount);
    }

    /**
     * The reducer {@code at_least:k} for a profile of {@code epochCount} epochs.
     *
     * @throws IllegalArgumentException unless {@code 1 <= k <= epochCount}
     */
    public static Reducer atLeast(int k, int epochCount) {
        requireEpochCount(epochCount);
        if (k < 1 || k > epochCount) {
            throw new IllegalArgumentException(
                    "at_least:K needs 1 <= K <= epochs.count (" + epochCount + "), got " + k);
        }
        return new Reducer(Kind.AT_LEAST, k);
    }

    private static void requireEpochCount(int epochCount) {
        if (epochCount < 1) {
            throw new IllegalArgumentException("epochs.count must be at least 1, got " + epochCount);
        }
    }

    private static String printable(String text) {
        StringBuilder out = new StringBuilder();
        text.codePoints().limit(40).forEach(cp -> {
            if (Character.isISOControl(cp)) {
                out.append(String.format("\\u%04x", cp));
            } else {
                out.appendCodePoint(cp);
            }
        });
        return text.codePointCount(0, text.length()) > 40 ? out + "..." : out.toString();
    }

    /** The reducer's name. */
    public Kind kind() {
        return kind;
    }

    /** K of {@code at_least:K}; 0 for the other reducers. */
    public int k() {
        return k;
    }

    /**
     * Reduces one evaluator's results over one case's epochs.
     *
     * <ul>
     *   <li>{@code score} = the mean of the epochs' scores (their exact sum divided by their count, rounded to the
     *       nearest double);
     *   <li>{@code errored} = any epoch errored; then {@code passed} is false;
     *   <li>otherwise {@code passed} as the reducer says (see the class comment), the others counting the epochs that
     *       passed, and {@code mean} comparing exactly, in decimal: the exact sum of the n scores is at least n x
     *       {@code passScore} (so three epochs scoring 0.7 meet a pass score of 0.7, which a floating-point mean
     *       would miss by one unit in the last place).
     * </ul>
     *
     * @param epochs    the case's epoch results, in epoch order; at least one, and for {@code at_least:K} at least K
     * @param passScore the evaluator's pass score (1.0 for the built-in evaluators); finite
     * @throws IllegalArgumentException for no epochs, fewer than K epochs, or a pass score that is not finite
     */
    public Outcome reduce(List<Outcome> epochs, double passScore) {
        Objects.requireNonNull(epochs, "epochs");
        if (epochs.isEmpty()) {
            throw new IllegalArgumentException("a reduction needs at least one epoch");
        }
        if (!Double.isFinite(passScore)) {
            throw new IllegalArgumentException("the pass score must be finite, got " + passScore);
        }
        if (kind == Kind.AT_LEAST && epochs.size() < k) {
            throw new IllegalArgumentException(this + " needs at least " + k + " epochs, got " + epochs.size());
        }
        int n = epochs.size();
        int passed = 0;
        boolean errored = false;
        BigDecimal sum = BigDecimal.ZERO;
        for (Outcome epoch : epochs) {
            Objects.requireNonNull(epoch, "epoch");
            sum = sum.add(new BigDecimal(epoch.score()));
            if (epoch.errored()) {
                errored = true;
            } else if (epoch.passed()) {
                passed++;
            }
        }
        BigDecimal count = BigDecimal.valueOf(n);
        double mean = sum.divide(count, MathContext.DECIMAL128).doubleValue();
        if (errored) {
            return new Outcome(false, mean, true);
        }
        boolean pass = switch (kind) {
            case MEAN -> sum.compareTo(new BigDecimal(passScore).multiply(count)) >= 0;
            case MAJORITY -> 2L * passed > n;
            case ANY -> passed >= 1;
            case ALL -> passed == n;
            case AT_LEAST -> passed >= k;
        };
        return new Outcome(pass, mean, false);
    }

    /** The canonical text, as {@link #parse} reads it: {@code mean}, ..., {@code at_least:3}. */
    @Override
    public String toString() {
        return kind == Kind.AT_LEAST ? kind.text() + ":" + k : kind.text();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Reducer r && r.kind == kind && r.k == k;
    }

    @Override
    public int hashCode() {
        return kind.hashCode() * 31 + k;
    }
}
