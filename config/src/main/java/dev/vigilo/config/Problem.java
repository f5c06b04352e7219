package dev.vigilo.config;

import java.util.Objects;
import java.util.Optional;

/**
 * One problem of a configuration document, in the one location style: {@code SOURCE:LINE:COLUMN: key.path: what}
 * ({@code SOURCE: key.path: what} when the document knows no position, as TOML documents; no key path for a problem
 * of the document as a whole).
 *
 * @param source   the document's name
 * @param position where the node (or its nearest located ancestor) starts, if known
 * @param path     the node's key path
 * @param what     what is wrong and what to do
 */
public record Problem(String source, Optional<Position> position, KeyPath path, String what) {
    public Problem {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(position, "position");
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(what, "what");
    }

    /** The problem as one line. */
    @Override
    public String toString() {
        return source + position.map(p -> ":" + p).orElse("") + ": " + (path.isRoot() ? "" : path + ": ") + what;
    }
}
