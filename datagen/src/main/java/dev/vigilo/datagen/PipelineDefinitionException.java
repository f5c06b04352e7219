package dev.vigilo.datagen;

import dev.vigilo.common.errors.InvalidInputException;

/**
 * The pipeline file or its input is invalid. The message says what, where ({@code
 * FILE:LINE:COLUMN}, 1-based) and what to do. Nothing durable was changed.
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

    /** 1-based line, 0 if unknown. */
    public int line() {
        return line;
    }

    /** 1-based column, 0 if unknown. */
    public int column() {
        return column;
    }
}
