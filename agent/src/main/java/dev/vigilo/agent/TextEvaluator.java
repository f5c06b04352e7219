package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Locale;
import java.util.Optional;

/** {@code exact_match} and {@code contains}: the output against the case's {@code expected}. */
final class TextEvaluator implements Evaluator {
    private final String name;
    private final boolean contains;
    private final boolean caseSensitive;
    private final boolean trim;

    private TextEvaluator(String name, boolean contains, boolean caseSensitive, boolean trim) {
        this.name = name;
        this.contains = contains;
        this.caseSensitive = caseSensitive;
        this.trim = trim;
    }

    static TextEvaluator exactMatch(String name, boolean caseSensitive, boolean trim) {
        return new TextEvaluator(name, false, caseSensitive, trim);
    }

    static TextEvaluator contains(String name, boolean caseSensitive) {
        return new TextEvaluator(name, true, caseSensitive, false);
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
        return Verdict.of(contains ? got.contains(want) : got.equals(want));
    }

    private String normalise(String s) {
        String t = trim ? s.strip() : s;
        return caseSensitive ? t : t.toLowerCase(Locale.ROOT);
    }
}
