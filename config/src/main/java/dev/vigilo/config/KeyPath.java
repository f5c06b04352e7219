package dev.vigilo.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The path of a node in a configuration document, from its root: keys and list indexes. Rendered for people as
 * {@code gates[3].required_evaluators[0]} (a key that is not a bare word is quoted, {@code stores."a b"}, as TOML
 * would need it written) and for lookups as a JSON pointer ({@code /gates/3/required_evaluators/0}). Immutable.
 */
public final class KeyPath {
    private static final KeyPath ROOT = new KeyPath(List.of());
    private static final Pattern BARE = Pattern.compile("[A-Za-z0-9_-]+");

    /** Each a {@link String} key or an {@link Integer} index. */
    private final List<Object> segments;

    private KeyPath(List<Object> segments) {
        this.segments = segments;
    }

    /** The document itself. */
    public static KeyPath root() {
        return ROOT;
    }

    /**
     * The path a JSON pointer names ({@code ""} is the root); a segment of digits is read as a list index, which
     * names the same node's position either way.
     */
    public static KeyPath ofPointer(String pointer) {
        Objects.requireNonNull(pointer, "pointer");
        if (pointer.isEmpty()) {
            return ROOT;
        }
        if (!pointer.startsWith("/")) {
            throw new IllegalArgumentException("not a JSON pointer: " + pointer);
        }
        KeyPath out = ROOT;
        for (String segment : pointer.substring(1).split("/", -1)) {
            String key = segment.replace("~1", "/").replace("~0", "~");
            out = key.matches("0|[1-9][0-9]{0,8}") ? out.index(Integer.parseInt(key)) : out.key(key);
        }
        return out;
    }

    /** The path of the value under {@code key} of the mapping at this path. */
    public KeyPath key(String key) {
        Objects.requireNonNull(key, "key");
        return with(key);
    }

    /** The path of the {@code index}-th (0-based) element of the list at this path. */
    public KeyPath index(int index) {
        if (index < 0) {
            throw new IllegalArgumentException("index " + index);
        }
        return with(index);
    }

    /** The path this one is under; the root's parent is the root. */
    public KeyPath parent() {
        return segments.isEmpty() ? this : new KeyPath(segments.subList(0, segments.size() - 1));
    }

    /** Whether this is the document itself. */
    public boolean isRoot() {
        return segments.isEmpty();
    }

    /** The JSON pointer of this path ({@code ""} for the root). */
    public String pointer() {
        StringBuilder b = new StringBuilder();
        for (Object s : segments) {
            b.append('/').append(s.toString().replace("~", "~0").replace("/", "~1"));
        }
        return b.toString();
    }

    private KeyPath with(Object segment) {
        List<Object> out = new ArrayList<>(segments.size() + 1);
        out.addAll(segments);
        out.add(segment);
        return new KeyPath(List.copyOf(out));
    }

    /** {@code a.b[0].c}; empty for the root. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (Object s : segments) {
            if (s instanceof Integer i) {
                b.append('[').append(i).append(']');
            } else {
                if (b.length() > 0) {
                    b.append('.');
                }
                String key = (String) s;
                b.append(
                        BARE.matcher(key).matches()
                                ? key
                                : "\"" + key.replace("\\", "\\\\").replace("\"", "\\\"") + "\"");
            }
        }
        return b.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyPath other && other.segments.equals(segments);
    }

    @Override
    public int hashCode() {
        return segments.hashCode();
    }
}
