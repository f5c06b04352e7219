package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a judge grades on: a numeric {@code scale} {@code {min, max}} or letter {@code grades} each worth a score in
 * [0, 1], and how a score the judge gave becomes the result's normalised score. Immutable.
 *
 * @param min    the scale's least score (scales only)
 * @param max    the scale's greatest score, above {@code min} (scales only)
 * @param grades the grades and their scores, in the profile's order; empty for a scale
 */
record JudgeScale(double min, double max, Map<String, Double> grades) {
    JudgeScale {
        grades = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(grades));
        if (grades.isEmpty() && !(Double.isFinite(min) && Double.isFinite(max) && min < max)) {
            throw new IllegalArgumentException("a scale needs finite min < max");
        }
    }

    static JudgeScale range(double min, double max) {
        return new JudgeScale(min, max, Map.of());
    }

    static JudgeScale ofGrades(Map<String, Double> grades) {
        Objects.requireNonNull(grades, "grades");
        if (grades.size() < 2) {
            throw new IllegalArgumentException("grades need at least two entries");
        }
        return new JudgeScale(0, 1, grades);
    }

    boolean isGrades() {
        return !grades.isEmpty();
    }

    /** The normalised score of what the judge gave (a number, or a grade's letter), or why it is none. */
    sealed interface Scored permits Value, Refused {}

    /** @param normalised in [0, 1]; @param shown the judge's score as given, for reasons */
    record Value(double normalised, String shown) implements Scored {}

    /** @param why one clause: what is wrong with the score */
    record Refused(String why) implements Scored {}

    /** Scores {@code given}: a JSON number or a string holding one for a scale, a grade's letter for grades. */
    Scored score(JsonNode given) {
        if (given == null || given.isNull() || given.isMissingNode()) {
            return new Refused("the answer has no score");
        }
        if (isGrades()) {
            String g = given.isTextual() ? given.asText().strip() : given.toString();
            return grade(g);
        }
        Optional<Double> n = number(given.isNumber() ? given.asText() : given.isTextual() ? given.asText() : "");
        if (n.isEmpty()) {
            return new Refused("the score " + Texts.oneLine(given.toString(), 40) + " is not a number");
        }
        return number(
                n.get(), given.isNumber() ? shown(n.get()) : given.asText().strip());
    }

    /** Scores a grade's letter: exact, else the one grade equal ignoring case. */
    Scored grade(String g) {
        Double v = grades.get(g);
        if (v == null) {
            List<String> same =
                    grades.keySet().stream().filter(k -> k.equalsIgnoreCase(g)).toList();
            if (same.size() == 1) {
                return new Value(grades.get(same.get(0)), same.get(0));
            }
            return new Refused(
                    "the grade \"" + Texts.oneLine(g, 40) + "\" is not one of " + String.join(", ", grades.keySet()));
        }
        return new Value(v, g);
    }

    /** Scores a number on the scale. */
    Scored number(double s, String shown) {
        if (!(s >= min && s <= max)) {
            return new Refused("the score " + Texts.oneLine(shown, 40) + " is outside the scale " + describe());
        }
        return new Value((s - min) / (max - min), shown);
    }

    /** {@code [0, 10]} or {@code grades A, B, C}. */
    String describe() {
        return isGrades() ? "grades " + String.join(", ", grades.keySet()) : "[" + shown(min) + ", " + shown(max) + "]";
    }

    /** The JSON Schema of the {@code score} the request asks for. */
    ObjectNode scoreSchema() {
        ObjectNode s = JsonNodeFactory.instance.objectNode();
        if (isGrades()) {
            s.put("type", "string");
            grades.keySet().forEach(s.withArray("enum")::add);
        } else {
            s.put("type", "number").put("minimum", min).put("maximum", max);
        }
        return s;
    }

    /** What the system message asks the score to be. */
    String instruction() {
        return isGrades()
                ? "\"score\" is one of the grades " + String.join(", ", grades.keySet()) + " (a string)"
                : "\"score\" is a number from " + shown(min) + " to " + shown(max);
    }

    /** A number as a person writes it: {@code 7}, {@code 0.5}. */
    static String shown(double d) {
        return BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
    }

    /** A finite number in {@code text} (blanks around allowed; {@code 7/10} reads 7), else empty. */
    static Optional<Double> number(String text) {
        String t = text.strip();
        int slash = t.indexOf('/');
        if (slash > 0) {
            t = t.substring(0, slash).strip();
        }
        if (t.isEmpty() || t.length() > 40 || !t.matches("[+-]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][+-]?\\d+)?")) {
            return Optional.empty();
        }
        double d = Double.parseDouble(t.toLowerCase(Locale.ROOT));
        return Double.isFinite(d) ? Optional.of(d) : Optional.empty();
    }
}
