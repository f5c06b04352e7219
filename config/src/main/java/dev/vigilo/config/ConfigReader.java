package dev.vigilo.config;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Reads typed values out of a {@link ConfigDocument} and reports what is wrong in the one location style
 * ({@link Problem}: {@code SOURCE:LINE:COLUMN: key.path: what}). A reader either collects problems (up to a bound,
 * so a user fixes a profile in one round) or stops at the first by throwing the exception its caller names (so a
 * configuration file's reader needs no partial values). The typed reads return what they could read, or empty or the
 * default after reporting a problem, so a collecting caller carries on. Not thread-safe: one reader per read of one
 * document.
 */
public final class ConfigReader {
    private final ConfigDocument document;
    private final int maxProblems;
    private final Function<Problem, RuntimeException> stop;
    private final List<Problem> problems = new ArrayList<>();

    private ConfigReader(ConfigDocument document, int maxProblems, Function<Problem, RuntimeException> stop) {
        this.document = Objects.requireNonNull(document, "document");
        this.maxProblems = maxProblems;
        this.stop = stop;
    }

    /** A reader that collects up to {@code maxProblems} problems (further ones are dropped). */
    public static ConfigReader collecting(ConfigDocument document, int maxProblems) {
        if (maxProblems < 1) {
            throw new IllegalArgumentException("maxProblems " + maxProblems);
        }
        return new ConfigReader(document, maxProblems, null);
    }

    /** A reader that throws {@code stop}'s exception at the first problem. */
    public static ConfigReader firstProblem(ConfigDocument document, Function<Problem, RuntimeException> stop) {
        return new ConfigReader(document, 1, Objects.requireNonNull(stop, "stop"));
    }

    /** The document read. */
    public ConfigDocument document() {
        return document;
    }

    /** The problems collected so far, in the order found. */
    public List<Problem> problems() {
        return List.copyOf(problems);
    }

    /** The problems collected so far, each as its line. */
    public List<String> problemLines() {
        return problems.stream().map(Problem::toString).toList();
    }

    /** Whether any problem was found. */
    public boolean hasProblems() {
        return !problems.isEmpty();
    }

    /**
     * Reports that the node at {@code at} is wrong: collected, or thrown by a first-problem reader.
     *
     * @param what what is wrong and what to do, in plain words
     */
    public void problem(KeyPath at, String what) {
        RuntimeException stopped = report(at, what);
        if (stopped != null) {
            throw stopped;
        }
    }

    /**
     * Reports a problem that ends the read and returns the exception to throw, for {@code throw reader.failure(..)}
     * where the caller cannot carry on: a first-problem reader's exception, or for a collecting reader an exception
     * listing what was collected (this problem included) as {@link #problemLines()} joined by {@code "; "}.
     */
    public RuntimeException failure(KeyPath at, String what) {
        RuntimeException stopped = report(at, what);
        return stopped != null
                ? stopped
                : new dev.vigilo.common.errors.InvalidInputException(String.join("; ", problemLines()));
    }

    /** Collects the problem, or returns the first-problem reader's exception for it. */
    private RuntimeException report(KeyPath at, String what) {
        Problem p = new Problem(document.source(), document.position(at), at, what);
        if (stop != null) {
            return stop.apply(p);
        }
        if (problems.size() < maxProblems) {
            problems.add(p);
        }
        return null;
    }

    /**
     * Every key of {@code mapping} must be one of {@code allowed}; each other key is reported as
     * {@code key.path: unknown key; allowed here: a, b, c}.
     */
    public void allowKeys(JsonNode mapping, KeyPath at, Collection<String> allowed) {
        for (Map.Entry<String, JsonNode> field : mapping.properties()) {
            if (!allowed.contains(field.getKey())) {
                problem(at.key(field.getKey()), "unknown key; allowed here: " + String.join(", ", allowed));
            }
        }
    }

    /**
     * A string: {@code is required} when a required one is absent or null, {@code must be a string, got a list}
     * when it is not text, {@code must not be empty} when it is empty.
     */
    public Optional<String> text(JsonNode node, KeyPath at, boolean required) {
        if (node == null || node.isNull()) {
            if (required) {
                problem(at, "is required");
            }
            return Optional.empty();
        }
        if (!node.isTextual()) {
            problem(at, "must be a string, got " + typeOf(node));
            return Optional.empty();
        }
        if (node.asText().isEmpty()) {
            problem(at, "must not be empty");
            return Optional.empty();
        }
        return Optional.of(node.asText());
    }

    /** An integer in {@code [min, max]}, {@code dflt} when absent: {@code must be an integer in [1, 10], got 11}. */
    public int integer(JsonNode node, KeyPath at, int min, int max, int dflt) {
        return (int) longInteger(node, at, min, max, dflt);
    }

    /** A long integer in {@code [min, max]}, {@code dflt} when absent (or wrong, after reporting it). */
    public long longInteger(JsonNode node, KeyPath at, long min, long max, long dflt) {
        if (node == null) {
            return dflt;
        }
        if (!node.isIntegralNumber() || !node.canConvertToLong() || node.asLong() < min || node.asLong() > max) {
            problem(at, "must be an integer in [" + min + ", " + max + "], got " + node);
            return dflt;
        }
        return node.asLong();
    }

    /**
     * A number in {@code [min, max]} (never NaN): empty when absent, or when it is not such a number, after
     * reporting {@code must be a number in [min, max]}.
     */
    public Optional<Double> number(JsonNode node, KeyPath at, double min, double max) {
        if (node == null) {
            return Optional.empty();
        }
        double v = node.asDouble();
        if (!node.isNumber() || Double.isNaN(v) || v < min || v > max) {
            problem(at, "must be a number in [" + plain(min) + ", " + plain(max) + "]");
            return Optional.empty();
        }
        return Optional.of(v);
    }

    /**
     * A decimal number of at least {@code min}, exactly as written ({@code 0.15} stays 0.15, not the nearest double),
     * for amounts that must add up exactly (prices): empty when absent (reported as {@code is required} when
     * required) or when it is not such a number, after reporting {@code must be a number >= 0, got "x"}.
     */
    public Optional<BigDecimal> decimal(JsonNode node, KeyPath at, boolean required, BigDecimal min) {
        if (node == null || node.isNull()) {
            if (required) {
                problem(at, "is required");
            }
            return Optional.empty();
        }
        BigDecimal value = null;
        if (node.isIntegralNumber()) {
            value = new BigDecimal(node.bigIntegerValue());
        } else if (node.isBigDecimal()) {
            value = node.decimalValue();
        } else if (node.isNumber() && Double.isFinite(node.asDouble())) {
            // A double's shortest text that reads back as itself: the number as the document wrote it.
            value = new BigDecimal(node.asText());
        }
        if (value == null || value.compareTo(min) < 0) {
            problem(at, "must be a number >= " + min.toPlainString() + ", got " + node);
            return Optional.empty();
        }
        return Optional.of(value);
    }

    /** A boolean, {@code dflt} when absent: {@code must be true or false, got "yes"}. */
    public boolean bool(JsonNode node, KeyPath at, boolean dflt) {
        if (node == null) {
            return dflt;
        }
        if (!node.isBoolean()) {
            problem(at, "must be true or false, got " + node);
            return dflt;
        }
        return node.asBoolean();
    }

    /**
     * One of {@code choices}, by its spelling: {@code unknown WHAT "x"; use a, b or c}; empty when absent (reported
     * when required) or unknown.
     *
     * @param what what the value names, e.g. {@code agent kind}
     */
    public <E> Optional<E> oneOf(JsonNode node, KeyPath at, boolean required, String what, Map<String, E> choices) {
        Optional<String> text = text(node, at, required);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        E choice = choices.get(text.get());
        if (choice == null) {
            problem(at, "unknown " + what + " \"" + text.get() + "\"; use " + alternatives(choices.keySet()));
            return Optional.empty();
        }
        return Optional.of(choice);
    }

    /**
     * A non-empty list of distinct strings, or empty when absent: {@code must be a non-empty list of strings},
     * {@code "a" is listed twice} at the repeated element.
     */
    public List<String> distinctStrings(JsonNode node, KeyPath at, String whenWrong) {
        if (node == null) {
            return List.of();
        }
        if (!node.isArray() || node.isEmpty()) {
            problem(at, whenWrong);
            return List.of();
        }
        Set<String> out = new LinkedHashSet<>();
        for (int i = 0; i < node.size(); i++) {
            Optional<String> s = text(node.get(i), at.index(i), true);
            if (s.isPresent() && !out.add(s.get())) {
                problem(at.index(i), "\"" + s.get() + "\" is listed twice");
            }
        }
        return List.copyOf(out);
    }

    /** The mapping at {@code at}, or empty after reporting {@code must be a mapping, got a list}. */
    public Optional<JsonNode> mapping(JsonNode node, KeyPath at) {
        if (node == null) {
            return Optional.empty();
        }
        if (!node.isObject()) {
            problem(at, "must be a mapping, got " + typeOf(node));
            return Optional.empty();
        }
        return Optional.of(node);
    }

    /** A node's type in plain words: {@code a list}, {@code a mapping}, {@code a string}, ... */
    public static String typeOf(JsonNode n) {
        return switch (n.getNodeType()) {
            case ARRAY -> "a list";
            case OBJECT -> "a mapping";
            case STRING -> "a string";
            case NUMBER -> "a number";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            default -> n.getNodeType().toString().toLowerCase(java.util.Locale.ROOT);
        };
    }

    /** {@code a}, {@code a or b}, {@code a, b or c}. */
    static String alternatives(Collection<String> names) {
        List<String> all = List.copyOf(names);
        if (all.size() == 1) {
            return all.get(0);
        }
        return String.join(", ", all.subList(0, all.size() - 1)) + " or " + all.get(all.size() - 1);
    }

    private static String plain(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
    }
}
