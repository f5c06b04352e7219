package dev.vigilo.checkpoint;

import java.util.Arrays;
import java.util.Objects;

/**
 * A field's value as stored in one event's {@code value_*} columns, keyed by {@code value_kind}
 * ({@code int, float, bool, str, json, blob}). Immutable.
 */
public sealed interface FieldValue {
    /** The {@code value_kind} column value. */
    String kind();

    /** Exact integer ({@code value_i64}). */
    record IntValue(long value) implements FieldValue {
        @Override
        public String kind() {
            return "int";
        }
    }

    /** Floating point ({@code value_f64}). */
    record FloatValue(double value) implements FieldValue {
        @Override
        public String kind() {
            return "float";
        }
    }

    /** Boolean ({@code value_bool}). */
    record BoolValue(boolean value) implements FieldValue {
        @Override
        public String kind() {
            return "bool";
        }
    }

    /** Text ({@code value_str}). */
    record StrValue(String value) implements FieldValue {
        public StrValue {
            Objects.requireNonNull(value, "value");
        }

        @Override
        public String kind() {
            return "str";
        }
    }

    /**
     * Canonical JSON text ({@code value_json}); the caller is responsible for canonical form (see
     * {@code Json}).
     */
    record JsonValue(String json) implements FieldValue {
        public JsonValue {
            Objects.requireNonNull(json, "json");
        }

        @Override
        public String kind() {
            return "json";
        }
    }

    /**
     * Bytes to write inline ({@code value_blob}, with {@code payload_size} and {@code
     * payload_checksum}).
     */
    record BlobValue(byte[] bytes) implements FieldValue {
        public BlobValue {
            bytes = Objects.requireNonNull(bytes, "bytes").clone();
        }

        @Override
        public byte[] bytes() {
            return bytes.clone();
        }

        @Override
        public String kind() {
            return "blob";
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof BlobValue b && Arrays.equals(bytes, b.bytes);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(bytes);
        }

        @Override
        public String toString() {
            return "BlobValue[" + bytes.length + " bytes]";
        }
    }

    /**
     * A blob read back from the log: size and checksum only. The bytes are loaded by {@link
     * LogReader#loadBlob} (event_id, then _rowid, then take_rows) only when used.
     */
    record BlobRef(EventId eventId, long size, String sha256) implements FieldValue {
        public BlobRef {
            Objects.requireNonNull(eventId, "eventId");
            Objects.requireNonNull(sha256, "sha256");
        }

        @Override
        public String kind() {
            return "blob";
        }
    }
}
