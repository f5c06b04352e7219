package dev.vigilo.storage;

import java.util.Objects;

/**
 * The physical identity of an object store, recorded with every durable dataset and plan so that a later reader
 * can check that its configuration resolves to the same bytes. Never contains credentials.
 *
 * <p>Forms: {@code local:<absolute normalized directory>} and
 * {@code s3:<endpoint or "aws">/<bucket>[/<prefix>]}.
 *
 * @param value the identity text
 */
public record StoreBinding(String value) {
    public StoreBinding {
        Objects.requireNonNull(value, "value");
        if (!(value.startsWith("local:") || value.startsWith("s3:"))) {
            throw new IllegalArgumentException("a store binding starts with local: or s3:, got \"" + value + "\"");
        }
    }

    @Override
    public String toString() {
        return value;
    }
}
