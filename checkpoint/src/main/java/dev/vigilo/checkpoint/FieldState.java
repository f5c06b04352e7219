package dev.vigilo.checkpoint;

import java.util.List;
import java.util.Objects;

/**
 * A folded field. FIELD_SET replaces: {@code values = [v]}, {@code appended = false}. FIELD_APPEND
 * accumulates: {@code v} is added to {@code values} and {@code appended} becomes true (an append
 * after a set keeps the set value as the list's first element).
 */
public record FieldState(List<FieldValue> values, boolean appended) {
    public FieldState {
        values = List.copyOf(Objects.requireNonNull(values, "values"));
        if (values.isEmpty()) {
            throw new IllegalArgumentException("a folded field has at least one value");
        }
    }

    /** The current value of a set field (the last value of an appended one). */
    public FieldValue last() {
        return values.get(values.size() - 1);
    }
}
