package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code similarity}: the normalised Levenshtein ratio {@code 1 - distance / max(length)} between the output and the
 * case's {@code expected} (both empty: 1) is the score, and the output passes when it is at least {@code threshold}.
 * Lengths and edits count Unicode code points, so an emoji or a CJK character outside the BMP is one character, not
 * two UTF-16 units (Apache Commons Text's {@code LevenshteinDistance} counts units, which is why this is not it).
 * {@code trim} and {@code case_sensitive} as for exact_match. The distance takes time proportional to the product of
 * the lengths: texts whose product exceeds {@link #MAX_CELLS} are the error {@code input_too_large}.
 */
final class SimilarityEvaluator implements Evaluator {
    /** The largest product of the two lengths compared: two texts of 10,000 characters (about 0.1 s). */
    static final long MAX_CELLS = 100_000_000L;

    private final String name;
    private final double threshold;
    private final boolean caseSensitive;
    private final boolean trim;

    SimilarityEvaluator(String name, double threshold, boolean caseSensitive, boolean trim) {
        this.name = name;
        this.threshold = threshold;
        this.caseSensitive = caseSensitive;
        this.trim = trim;
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output) {
        Optional<String> expected = Evaluator.expectedText(caseTree);
        if (expected.isEmpty()) {
            return Verdict.error(
                    EvaluatorErrorType.MISSING_EXPECTED,
                    "evaluator \"" + name + "\" (similarity) needs the case's expected, and case \""
                            + Texts.oneLine(caseRecord.id(), 80) + "\" has none; add expected to the case or limit"
                            + " the evaluator with applies_to");
        }
        String wantText = normalise(expected.get());
        String gotText = normalise(output);
        long wantLength = wantText.codePointCount(0, wantText.length());
        long gotLength = gotText.codePointCount(0, gotText.length());
        // Checked before the code points are copied out: a refused output costs no arrays.
        if (wantLength * gotLength > MAX_CELLS) {
            return Verdict.error(
                    EvaluatorErrorType.INPUT_TOO_LARGE,
                    "evaluator \"" + name + "\" (similarity) would compare an output of " + gotLength
                            + " characters with an expected of " + wantLength + " characters; the product of"
                            + " the lengths may be at most " + MAX_CELLS + " (two texts of 10,000 characters):"
                            + " use exact_match, contains or a command evaluator for longer texts");
        }
        int[] want = wantText.codePoints().toArray();
        int[] got = gotText.codePoints().toArray();
        int longer = Math.max(want.length, got.length);
        int distance;
        try {
            distance = distance(want, got);
        } catch (InterruptedException x) {
            Thread.currentThread().interrupt();
            return Verdict.error(
                    EvaluatorErrorType.CANCELLED,
                    "evaluator \"" + name + "\" was cancelled (the worker was interrupted)");
        }
        double ratio = longer == 0 ? 1 : 1 - (double) distance / longer;
        boolean passed = ratio >= threshold;
        // The exact fraction beside the rounded ratio: 0.79996 shows as 0.8, and must not read as passing 0.8.
        String reason =
                "similarity " + NumericEvaluator.shown(BigDecimal.valueOf(ratio).setScale(4, RoundingMode.HALF_EVEN))
                        + " = 1 - " + distance + "/" + longer + " (edit distance / longer length in characters) "
                        + (passed ? ">=" : "<") + " threshold " + NumericEvaluator.shown(BigDecimal.valueOf(threshold));
        return new Verdict(passed, ratio, Optional.empty(), Optional.of(reason));
    }

    /**
     * The Levenshtein distance of {@code a} and {@code b} (insertions, deletions and substitutions of one code point
     * each cost 1), in two rows of the shorter length.
     *
     * @throws InterruptedException when the thread is interrupted (checked once per row)
     */
    static int distance(int[] a, int[] b) throws InterruptedException {
        if (a.length < b.length) {
            int[] t = a;
            a = b;
            b = t;
        }
        int[] previous = new int[b.length + 1];
        int[] current = new int[b.length + 1];
        for (int j = 0; j <= b.length; j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length; i++) {
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedException();
            }
            current[0] = i;
            int ai = a[i - 1];
            for (int j = 1; j <= b.length; j++) {
                int substitution = previous[j - 1] + (ai == b[j - 1] ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] t = previous;
            previous = current;
            current = t;
        }
        return previous[b.length];
    }

    private String normalise(String s) {
        String t = trim ? s.strip() : s;
        return caseSensitive ? t : t.toLowerCase(Locale.ROOT);
    }
}
