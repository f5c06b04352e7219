package dev.vigilo.dataset;

import dev.vigilo.common.errors.InvalidInputException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * The file offered for upload is not a valid dataset. The message has the form
 * {@code FILE:LINE:COLUMN: what is wrong} (line and column 1-based, omitted when the problem is the whole file).
 * Thrown before anything is stored: the catalog and the object store are unchanged. Kind INVALID_INPUT.
 */
public final class InvalidDatasetException extends InvalidInputException {
    private static final long serialVersionUID = 1L;
    private final transient Path file;
    private final long line;
    private final int column;

    /**
     * @param line   1-based line, or 0 when the problem concerns the whole file
     * @param column 1-based column (bytes within the line), or 0 when unknown
     */
    public InvalidDatasetException(Path file, long line, int column, String problem) {
        super(format(file, line, column, problem));
        this.file = Objects.requireNonNull(file, "file");
        this.line = line;
        this.column = column;
    }

    private static String format(Path file, long line, int column, String problem) {
        StringBuilder b = new StringBuilder().append(file);
        if (line > 0) {
            b.append(':').append(line);
            if (column > 0) {
                b.append(':').append(column);
            }
        }
        return b.append(": ").append(problem).toString();
    }

    public Path file() {
        return file;
    }

    /** 1-based line number, 0 when the problem concerns the whole file. */
    public long line() {
        return line;
    }

    /** 1-based byte column within the line, 0 when unknown. */
    public int column() {
        return column;
    }
}
