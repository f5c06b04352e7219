package dev.vigilo.checkpoint;

import java.util.Objects;

/**
 * Identity of one checkpoint batch (a step boundary); shared by every event written in that batch.
 */
public record CheckpointId(String value) {
    public CheckpointId {
        Objects.requireNonNull(value, "value");
        if (value.isEmpty()) {
            throw new IllegalArgumentException("checkpoint id must not be empty");
        }
    }

    @Override
    public String toString() {
        return value;
    }
}
