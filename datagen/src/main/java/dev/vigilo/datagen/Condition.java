package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Comparator;
import java.util.Objects;

/**
 * {@code {field: F}} holds when F is present and truthy (not null/false/0/""/[]/{}); {@code {field:
 * F, equals: V}} holds when F equals the JSON value V, numbers compared by value (JSON has one number
 * type: 2, 2.0 and a 2 read back from the checkpoint log as a long are the same value). That matters
 * for resumes: fields folded from the log and fields parsed from a step's output must decide a
 * condition the same way, or a resumed loop runs an extra iteration.
 */
public record Condition(String field, JsonNode equals) {
    /** Numbers by value, everything else by Jackson's equality (applied inside arrays and objects too). */
    private static final Comparator<JsonNode> JSON_VALUES = (a, b) -> {
        if (a.isNumber() && b.isNumber()) {
            return a.decimalValue().compareTo(b.decimalValue());
        }
        return a.equals(b) ? 0 : 1;
    };

    public Condition {
        Objects.requireNonNull(field, "field");
    }

    /** Evaluates against an item's fields object. */
    public boolean test(JsonNode fields) {
        JsonNode v = fields.get(field);
        if (equals != null) {
            return v != null && equals.equals(JSON_VALUES, v);
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
}
