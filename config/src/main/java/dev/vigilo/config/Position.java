package dev.vigilo.config;

/**
 * Where a node of a configuration document starts: 1-based line and column, as parsers report them.
 *
 * @param line   1-based line
 * @param column 1-based column
 */
public record Position(long line, long column) {
    public Position {
        if (line < 1 || column < 1) {
            throw new IllegalArgumentException("1-based line and column, got " + line + ":" + column);
        }
    }

    /** {@code LINE:COLUMN}. */
    @Override
    public String toString() {
        return line + ":" + column;
    }
}
