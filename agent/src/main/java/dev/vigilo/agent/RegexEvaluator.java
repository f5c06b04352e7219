package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.config.SafeRegex;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code regex}: passes when the pattern (or, without one, the case's {@code expected}) matches somewhere in the
 * output (find, not whole-text match: anchor with {@code ^...$}). RE2/J, time-bounded by {@link DeadlineText}. The
 * reason quotes the pattern and the first match with its position, or the start of the output when nothing matched.
 */
final class RegexEvaluator implements Evaluator {
    private final String name;
    private final Optional<Pattern> pattern;
    private final Duration timeLimit;
    private final SecretValues secrets;

    RegexEvaluator(String name, Optional<Pattern> pattern, Duration timeLimit, SecretValues secrets) {
        this.name = name;
        this.pattern = pattern;
        this.timeLimit = timeLimit;
        this.secrets = secrets;
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output) {
        Pattern p;
        if (pattern.isPresent()) {
            p = pattern.get();
        } else {
            JsonNode e = caseTree.get("expected");
            String id = Texts.oneLine(caseRecord.id(), 80);
            if (e == null || e.isNull()) {
                return Verdict.error(
                        EvaluatorErrorType.MISSING_EXPECTED,
                        "evaluator \"" + name + "\" (regex without pattern) uses the case's expected as its pattern,"
                                + " and case \"" + id + "\" has none; add expected or give the evaluator a pattern");
            }
            if (!e.isTextual()) {
                return Verdict.error(
                        EvaluatorErrorType.INVALID_PATTERN,
                        "evaluator \"" + name + "\" uses the case's expected as its pattern, and case \"" + id
                                + "\" has a " + e.getNodeType().toString().toLowerCase(Locale.ROOT)
                                + " there, not a string; give expected as a pattern string");
            }
            try {
                p = SafeRegex.compile(e.asText());
            } catch (InvalidInputException x) {
                return Verdict.error(
                        EvaluatorErrorType.INVALID_PATTERN,
                        "evaluator \"" + name + "\": expected of case \"" + id + "\": " + x.getMessage());
            }
        }
        try {
            Matcher m = p.matcher(new DeadlineText(output, System.nanoTime() + timeLimit.toNanos()));
            String shown = "pattern " + Reasons.quote(p.pattern(), secrets);
            if (m.find()) {
                return Verdict.of(
                        true,
                        shown + " matched " + Reasons.excerpt(output, m.start(), m.end(), secrets) + " at character "
                                + (Reasons.codePointIndex(output, m.start()) + 1));
            }
            return Verdict.of(false, shown + " did not match output " + Reasons.quote(output, secrets));
        } catch (DeadlineText.Expired x) {
            if (x.interrupted) {
                return Verdict.error(
                        EvaluatorErrorType.CANCELLED,
                        "evaluator \"" + name + "\" was cancelled (the worker was interrupted)");
            }
            return Verdict.error(
                    EvaluatorErrorType.TIMEOUT,
                    "evaluator \"" + name + "\" did not finish matching an output of " + output.length()
                            + " characters within " + Texts.seconds(timeLimit) + "; simplify the pattern (fewer"
                            + " nested counted repetitions)");
        }
    }
}
