package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * {@code {field: F}} holds when F is present and truthy (not null/false/0/""/[]/{}); {@code {field:
 * F, equals: V}} holds when F equals the JSON value V, numbers compared by value (JSON has one number
 * type: 2, 2.0 and a 2 read back from the checkpoint log as a long are the same value). That matters
 * for resumes: fields folded from the log and fields parsed from a step's output must decide a
 * condition the same way, or a resumed loop runs an extra iteration.
 *
 * <p>For judge-then-filter pipelines: {@code at_least: N} and {@code at_most: N} hold when F is a number (by value)
 * within the bound, {@code in: [V, ...]} when F equals one of the values (as {@code equals} compares). Every test
 * given must hold; a missing field, or a field that is not a number for a bound, fails the condition.
 *
 * @param equals  the value F must equal, or null
 * @param atLeast the least value F may have, or null
 * @param atMost  the greatest value F may have, or null
 * @param in      the values F may equal (empty: no such test)
 */
public record Condition(String field, JsonNode equals, BigDecimal atLeast, BigDecimal atMost, List<JsonNode> in) {
    /** Numbers by value, everything else by Jackson's equality (applied inside arrays and objects too). */
    private static final Comparator<JsonNode> JSON_VALUES = (a, b) -> {
        if (a.isNumber() && b.isNumber()) {
            return a.decimalValue().compareTo(b.decimalValue());
        }
        return a.equals(b) ? 0 : 1;
    };

    public Condition {
        Objects.requireNonNull(field, "field");
        in = List.copyOf(in);
    }

    /** {@code {field: F[, equals: V]}}. */
    public Condition(String field, JsonNode equals) {
        this(field, equals, null, null, List.of());
    }

    /** Evaluates against an item's fields object. */
    public boolean test(JsonNode fields) {
        JsonNode v = fields.get(field);
        if (equals != null || atLeast != null || atMost != null || !in.isEmpty()) {
            return v != null && matches(v);
        }
        if (v == null || v.isNull() || v.isMissingNode()) {
            return false;
        }
        if (v.isBoolean()) {
            return v.booleanValue();
        }
        if (v.isNumber()) {
            return v.doubleValue() != 0;
        }
        if (v.isTextual()) {
            return !v.textValue().isEmpty();
        }
        return v.size() > 0;
    }

    private boolean matches(JsonNode v) {
        if (equals != null && !equals.equals(JSON_VALUES, v)) {
            return false;
        }
        if (!in.isEmpty() && in.stream().noneMatch(x -> x.equals(JSON_VALUES, v))) {
            return false;
        }
        if (atLeast != null || atMost != null) {
            if (!v.isNumber()) {
                return false;
            }
            BigDecimal n = v.decimalValue();
            return (atLeast == null || n.compareTo(atLeast) >= 0) && (atMost == null || n.compareTo(atMost) <= 0);
        }
        return true;
    }
}
