package dev.vigilo.config;

import dev.vigilo.common.errors.InvalidInputException;
import java.util.Objects;
import java.util.Optional;

/**
 * A configuration document is not valid YAML, JSON or TOML, or went over a limit of its parser. Its message is the
 * one location style, {@code SOURCE:LINE:COLUMN: not valid FORMAT: problem} (without {@code :LINE:COLUMN} when the
 * parser gives no place), followed by {@code ; flatten it} for a limit; readers whose documented messages say it
 * differently build theirs from {@link #problem()}, {@link #position()} and {@link #isLimit()}. Kind INVALID_INPUT.
 */
public final class ConfigSyntaxException extends InvalidInputException {
    private static final long serialVersionUID = 1L;

    private final String source;
    private final String format;
    private final transient Optional<Position> position;
    private final String problem;
    private final boolean limit;

    ConfigSyntaxException(
            String source, String format, Optional<Position> position, String problem, boolean limit, Throwable cause) {
        super(
                source + position.map(p -> ":" + p).orElse("") + ": not valid " + format + ": " + problem
                        + (limit ? "; flatten it" : ""),
                cause);
        this.source = Objects.requireNonNull(source, "source");
        this.format = format;
        this.position = position;
        this.problem = problem;
        this.limit = limit;
    }

    /** The document's name as given to the reader. */
    public String source() {
        return source;
    }

    /** {@code YAML}, {@code JSON} or {@code TOML}. */
    public String format() {
        return format;
    }

    /** Where the parser stopped, when it says. */
    public Optional<Position> position() {
        return position;
    }

    /** The parser's problem on one line, in plain words for a limit ({@link ParserLimits}). */
    public String problem() {
        return problem;
    }

    /** Whether a limit (nesting depth, number or string length) was hit rather than a syntax rule broken. */
    public boolean isLimit() {
        return limit;
    }
}
