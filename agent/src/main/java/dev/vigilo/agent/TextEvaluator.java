package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.SecretValues;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code exact_match} and {@code contains}: the output against the case's {@code expected}. Reasons quote the texts
 * as compared (after {@code trim} and case folding).
 */
final class TextEvaluator implements Evaluator {
    private final String name;
    private final boolean contains;
    private final boolean caseSensitive;
    private final boolean trim;
    private final SecretValues secrets;

    private TextEvaluator(String name, boolean contains, boolean caseSensitive, boolean trim, SecretValues secrets) {
        this.name = name;
        this.contains = contains;
        this.caseSensitive = caseSensitive;
        this.trim = trim;
        this.secrets = secrets;
    }

    static TextEvaluator exactMatch(String name, boolean caseSensitive, boolean trim, SecretValues secrets) {
        return new TextEvaluator(name, false, caseSensitive, trim, secrets);
    }

    static TextEvaluator contains(String name, boolean caseSensitive, SecretValues secrets) {
        return new TextEvaluator(name, true, caseSensitive, false, secrets);
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output) {
        Optional<String> expected = Evaluator.expectedText(caseTree);
        if (expected.isEmpty()) {
            return Verdict.error(
                    EvaluatorErrorType.MISSING_EXPECTED,
                    "evaluator \"" + name + "\" (" + (contains ? "contains" : "exact_match") + ") needs the case's"
                            + " expected, and case \"" + Texts.oneLine(caseRecord.id(), 80) + "\" has none; add"
                            + " expected to the case or limit the evaluator with applies_to");
        }
        String want = normalise(expected.get());
        String got = normalise(output);
        return contains ? contains(want, got) : equals(want, got);
    }

    private Verdict contains(String want, String got) {
        int at = got.indexOf(want);
        if (at >= 0) {
            return Verdict.of(
                    true,
                    "output contains expected " + Reasons.quote(want, secrets) + " at character "
                            + (Reasons.codePointIndex(got, at) + 1));
        }
        return Verdict.of(
                false,
                "expected " + Reasons.quote(want, secrets) + " not found in output " + Reasons.quote(got, secrets));
    }

    private Verdict equals(String want, String got) {
        int at = Reasons.firstDifference(want, got);
        if (at < 0) {
            return Verdict.of(true, "output equals expected " + Reasons.quote(want, secrets));
        }
        if (Math.max(want.codePointCount(0, want.length()), got.codePointCount(0, got.length())) <= Reasons.SHOWN) {
            return Verdict.of(
                    false, "expected " + Reasons.quote(want, secrets) + ", got " + Reasons.quote(got, secrets));
        }
        return Verdict.of(
                false,
                "expected " + Reasons.window(want, at, secrets) + ", got " + Reasons.window(got, at, secrets)
                        + " (first difference at character " + (at + 1) + ")");
    }

    private String normalise(String s) {
        String t = trim ? s.strip() : s;
        return caseSensitive ? t : t.toLowerCase(Locale.ROOT);
    }
}
