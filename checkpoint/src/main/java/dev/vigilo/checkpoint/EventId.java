package dev.vigilo.checkpoint;

import java.util.Objects;

/**
 * Deterministic identity of one event, the log's (unenforced) primary key. Derived by {@link
 * EventIds}; a retried batch carries the same ids, so every read sees each event once.
 */
public record EventId(String value) {
    public EventId {
        Objects.requireNonNull(value, "value");
        if (value.isEmpty()) {
            throw new IllegalArgumentException("event id must not be empty");
        }
    }

    @Override
    public String toString() {
        return value;
    }
}
