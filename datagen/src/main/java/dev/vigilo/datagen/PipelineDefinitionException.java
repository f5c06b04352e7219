package dev.vigilo.datagen;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.config.Problem;

/**
 * The pipeline file or its input is invalid. The message says what, where ({@code FILE:LINE:COLUMN}, 1-based, and
 * for a problem of the pipeline file the key path: {@code FILE:LINE:COLUMN: key.path: what}) and what to do. Nothing
 * durable was changed.
 */
public class PipelineDefinitionException extends InvalidInputException {
    private static final long serialVersionUID = 1L;

    private final int line;
    private final int column;

    public PipelineDefinitionException(String file, int line, int column, String problem) {
        super(file + ":" + line + ":" + column + ": " + problem);
        this.line = line;
        this.column = column;
    }

    /**
     * A problem found reading the pipeline file, in the one location style of configuration documents:
     * {@code FILE:LINE:COLUMN: key.path: what}.
     */
    public PipelineDefinitionException(Problem problem) {
        super(problem.toString());
        this.line = problem.position().map(p -> (int) p.line()).orElse(0);
        this.column = problem.position().map(p -> (int) p.column()).orElse(0);
    }

    /** 1-based line, 0 if unknown. */
    public int line() {
        return line;
    }

    /** 1-based column, 0 if unknown. */
    public int column() {
        return column;
    }
}
