package dev.vigilo.checkpoint;

/**
 * The dataset is not a checkpoint log this version understands (missing column, wrong type, newer
 * schema_version).
 */
public class LogFormatException extends CheckpointException {
    public LogFormatException(String message) {
        super(message);
    }
}
