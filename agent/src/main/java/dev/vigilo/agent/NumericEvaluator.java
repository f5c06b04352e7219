package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import dev.vigilo.common.errors.SecretValues;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Optional;

/**
 * {@code numeric}: the last number in the output is within {@code tolerance} (absolute: |got - expected| <=
 * tolerance) or {@code relative_tolerance} (|got - expected| <= relative_tolerance * |expected|) of the case's
 * {@code expected}, a JSON number or a string holding one number. A number is an optional sign, digits (or digits
 * grouped in threes by commas, which are dropped), an optional fraction and an optional exponent: {@code 42},
 * {@code -1,234.5}, {@code .5}, {@code 6.02e23}; around it anything ({@code $42}, {@code 42%}, {@code **42**} all
 * read 42; {@code v2} and {@code H2O} hold none); {@code NaN} and {@code Infinity} are not numbers. The last number
 * is taken because answers end with their result (Inspect's numeric match reads the end). Decimal arithmetic (34
 * significant digits): {@code 0.3} is 0.3, not the nearest binary double, and {@code 1e400} is a number like any
 * other. docs/formats/agent-protocol.md has the whole rule.
 */
final class NumericEvaluator implements Evaluator {
    /** The longest number read (an output of a million digits is not an answer; parsing it would be slow). */
    static final int MAX_NUMBER_CHARS = 400;
    /** The largest exponent (as a BigDecimal's scale, either sign) of a number read. */
    static final int MAX_SCALE = 100_000;

    /** The number syntax; a match right after a letter, digit or '.' belongs to a word ({@code v2}), not a number. */
    private static final Pattern NUMBER = Pattern.compile(
            "(?:^|[^\\p{L}\\p{N}.])([-+]?(?:\\d{1,3}(?:,\\d{3})+|\\d+)?(?:\\.\\d+)?(?:[eE][-+]?\\d+)?)");

    private static final Pattern WHOLE =
            Pattern.compile("^[-+]?(?:\\d{1,3}(?:,\\d{3})+|\\d+)?(?:\\.\\d+)?(?:[eE][-+]?\\d+)?$");

    private final String name;
    private final Optional<BigDecimal> tolerance;
    private final Optional<BigDecimal> relativeTolerance;
    private final SecretValues secrets;

    NumericEvaluator(
            String name, Optional<BigDecimal> tolerance, Optional<BigDecimal> relativeTolerance, SecretValues secrets) {
        if (tolerance.isPresent() == relativeTolerance.isPresent()) {
            throw new IllegalArgumentException("exactly one of tolerance and relative_tolerance");
        }
        this.name = name;
        this.tolerance = tolerance;
        this.relativeTolerance = relativeTolerance;
        this.secrets = secrets;
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output) {
        JsonNode e = caseTree.get("expected");
        String id = Texts.oneLine(caseRecord.id(), 80);
        if (e == null || e.isNull()) {
            return Verdict.error(
                    EvaluatorErrorType.MISSING_EXPECTED,
                    "evaluator \"" + name + "\" (numeric) needs the case's expected, and case \"" + id + "\" has"
                            + " none; add expected to the case or limit the evaluator with applies_to");
        }
        if (e.isFloatingPointNumber() && !Double.isFinite(e.asDouble())) {
            return Verdict.error(
                    EvaluatorErrorType.INVALID_EXPECTED,
                    "evaluator \"" + name + "\" (numeric): expected of case \"" + id + "\" is a JSON number beyond"
                            + " the range of a double (about 1.8e308), which is how JSON numbers are read; give it as"
                            + " a string such as \"1e400\"");
        }
        Optional<BigDecimal> want = expected(e);
        if (want.isEmpty()) {
            return Verdict.error(
                    EvaluatorErrorType.INVALID_EXPECTED,
                    "evaluator \"" + name + "\" (numeric): expected of case \"" + id + "\" is "
                            + Texts.oneLine(Json.text(e), 60) + ", not a number; give expected as a JSON number or"
                            + " a string holding one number such as \"42\" or \"-1.5e3\"");
        }
        Optional<Found> found = last(output);
        String expectedShown = "expected " + shown(want.get());
        if (found.isEmpty()) {
            return Verdict.of(false, "no number in the output (" + expectedShown + ")");
        }
        Found got = found.get();
        String gotShown = "found " + Reasons.excerpt(output, got.begin, got.end, secrets);
        if (got.value.isEmpty()) {
            return Verdict.of(
                    false,
                    gotShown + ", too long (over " + MAX_NUMBER_CHARS + " characters) or too large to read as a"
                            + " number (" + expectedShown + ")");
        }
        BigDecimal difference =
                got.value.get().subtract(want.get(), MathContext.DECIMAL128).abs();
        BigDecimal allowed = tolerance.orElseGet(
                () -> relativeTolerance.get().multiply(want.get().abs(), MathContext.DECIMAL128));
        boolean within = difference.compareTo(allowed) <= 0;
        String bound = tolerance.isPresent()
                ? "within " + shown(allowed) + " of " + expectedShown
                : "within relative tolerance " + shown(relativeTolerance.get()) + " of " + expectedShown
                        + " (allowed difference " + shown(allowed) + ")";
        return Verdict.of(
                within, gotShown + ", " + (within ? "" : "not ") + bound + ": the difference is " + shown(difference));
    }

    /** The case's expected as a number: a JSON number, or a string that is one number (surrounding blanks aside). */
    static Optional<BigDecimal> expected(JsonNode e) {
        if (e.isNumber()) {
            // A double's text is its shortest one that reads back as itself: the number as the case wrote it.
            return parse(e.asText());
        }
        if (!e.isTextual()) {
            return Optional.empty();
        }
        String s = e.asText().strip();
        if (s.length() > MAX_NUMBER_CHARS || !hasDigit(s) || !WHOLE.matcher(s).find()) {
            return Optional.empty();
        }
        return parse(s);
    }

    /** Where the last number of the output is, and its value (empty when it is longer than the bound). */
    private record Found(int begin, int end, Optional<BigDecimal> value) {}

    private static Optional<Found> last(String output) {
        Matcher m = NUMBER.matcher(output);
        Found last = null;
        int from = 0;
        while (from <= output.length() && m.find(from)) {
            int begin = m.start(1);
            int end = m.end(1);
            // Matches that are only a sign, or only an exponent's letter, hold no digit: not numbers.
            if (end > begin && hasDigit(output.substring(begin, end))) {
                last = new Found(
                        begin,
                        end,
                        end - begin > MAX_NUMBER_CHARS ? Optional.empty() : parse(output.substring(begin, end)));
            }
            from = Math.max(end, m.start() + 1);
        }
        return Optional.ofNullable(last);
    }

    private static boolean hasDigit(String s) {
        int exponent = s.indexOf('e') >= 0 ? s.indexOf('e') : s.indexOf('E');
        String mantissa = exponent >= 0 ? s.substring(0, exponent) : s;
        return mantissa.chars().anyMatch(c -> c >= '0' && c <= '9');
    }

    /** The number {@code s} spells, empty when its exponent is beyond +-{@value #MAX_SCALE}. */
    private static Optional<BigDecimal> parse(String s) {
        try {
            BigDecimal v = new BigDecimal(s.replace(",", ""));
            // Far beyond any answer, and the bound keeps the arithmetic's exponents inside an int.
            return Math.abs((long) v.scale()) > MAX_SCALE ? Optional.empty() : Optional.of(v);
        } catch (NumberFormatException x) {
            return Optional.empty();
        }
    }

    /** A number for a reason: plain up to 20 digits either side of the point, else in E notation. */
    static String shown(BigDecimal v) {
        BigDecimal s = v.stripTrailingZeros();
        return s.scale() > 20 || s.scale() < -20 || s.precision() > 40 ? s.toString() : s.toPlainString();
    }
}
