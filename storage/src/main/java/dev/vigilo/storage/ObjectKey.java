package dev.vigilo.storage;

import java.util.Objects;

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
    /** Longest accepted key, in characters; S3 allows 1024 bytes and the store may add a prefix. */
    public static final int MAX_LENGTH = 512;

    public ObjectKey {
        Objects.requireNonNull(value, "value");
        if (value.isEmpty() || value.length() > MAX_LENGTH) {
            throw new IllegalArgumentException(
                    "object key must be 1.." + MAX_LENGTH + " characters, got " + value.length());
        }
        // A character loop rather than a pattern per segment: keys are made for every transcript and receipt.
        int start = 0;
        for (int i = 0; i <= value.length(); i++) {
            if (i == value.length() || value.charAt(i) == '/') {
                if (!validSegment(value, start, i)) {
                    throw new IllegalArgumentException("object key \"" + value + "\" has an invalid segment \""
                            + value.substring(start, i)
                            + "\" (segments are [A-Za-z0-9._-], non-empty, not starting with '.')");
                }
                start = i + 1;
            }
        }
    }

    /** Whether {@code value[from, to)} is a segment: {@code [A-Za-z0-9_-][A-Za-z0-9._-]*}. */
    private static boolean validSegment(String value, int from, int to) {
        if (from == to || value.charAt(from) == '.') {
            return false;
        }
        for (int i = from; i < to; i++) {
            char c = value.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '.'
                    || c == '_'
                    || c == '-';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@code value} in decimal with leading zeros up to {@code width} digits, as {@code String.format("%0<width>d")}
     * gives it, without a formatter: the numbered segment of a key (a chunk's index), so that keys sort by number.
     */
    public static String zeroPadded(long value, int width) {
        if (value < 0) {
            return String.format("%0" + width + "d", value);
        }
        String digits = Long.toString(value);
        return digits.length() >= width ? digits : "0".repeat(width - digits.length()) + digits;
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
