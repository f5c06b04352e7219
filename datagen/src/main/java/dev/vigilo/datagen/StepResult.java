package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What a successful attempt produced: field updates, and query tags for its STEP_COMPLETED (a chat step's usage,
 * cost, request hash and, with {@code cache: true}, its answer), null when there are none.
 */
record StepResult(ObjectNode updates, ObjectNode tags) {
    /** Updates without tags. */
    static StepResult of(ObjectNode updates) {
        return new StepResult(updates, null);
    }
}
