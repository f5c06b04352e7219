package dev.vigilo.storage;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The name of an immutable object inside one object store, relative to the store's root (local directory or
 * S3 bucket prefix).
 *
 * <p>A key is one or more {@code /}-separated segments of {@code [A-Za-z0-9._-]}, none of them empty, {@code .}
 * or {@code ..}, and none starting with {@code .} (the local store reserves dot-names for its temporary files).
 * At most 512 characters. Keys compare by their string value.
 *
 * @param value the key text, for example {@code datasets/blobs/ab/ab12...}
 * @throws IllegalArgumentException when the text is not a valid key (the message says which rule it breaks)
 */
public record ObjectKey(String value) implements Comparable<ObjectKey> {
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]*");
    /** Longest accepted key, in characters; S3 allows 1024 bytes and the store may add a prefix. */
    public static final int MAX_LENGTH = 512;

    public ObjectKey {
        Objects.requireNonNull(value, "value");
        if (value.isEmpty() || value.length() > MAX_LENGTH) {
            throw new IllegalArgumentException(
                    "object key must be 1.." + MAX_LENGTH + " characters, got " + value.length());
        }
        for (String segment : value.split("/", -1)) {
            if (!SEGMENT.matcher(segment).matches()) {
                throw new IllegalArgumentException("object key \"" + value + "\" has an invalid segment \"" + segment
                        + "\" (segments are [A-Za-z0-9._-], non-empty, not starting with '.')");
            }
        }
    }

    public static ObjectKey of(String value) {
        return new ObjectKey(value);
    }

    /** Returns {@code this/child}; {@code child} must itself be a valid key. */
    public ObjectKey resolve(String child) {
        return new ObjectKey(value + "/" + child);
    }

    /** True when this key starts with {@code prefix} as plain text (S3 list semantics). */
    public boolean startsWith(String prefix) {
        return value.startsWith(prefix);
    }

    @Override
    public int compareTo(ObjectKey other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
