package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Objects;

/**
 * {@code {field: F}} holds when F is present and truthy (not null/false/0/""/[]/{}); {@code {field:
 * F, equals: V}} holds when F equals the JSON value V.
 */
public record Condition(String field, JsonNode equals) {
    public Condition {
        Objects.requireNonNull(field, "field");
    }

    /** Evaluates against an item's fields object. */
    public boolean test(JsonNode fields) {
        JsonNode v = fields.get(field);
        if (equals != null) return equals.equals(v);
        if (v == null || v.isNull() || v.isMissingNode()) return false;
        if (v.isBoolean()) return v.booleanValue();
        if (v.isNumber()) return v.doubleValue() != 0;
        if (v.isTextual()) return !v.textValue().isEmpty();
        return v.size() > 0;
    }
}
