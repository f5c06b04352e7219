package dev.vigilo.checkpoint;

/**
 * Lance or the object store failed. For a write, the batch's outcome is unknown: it may or may not
 * be durable; retrying the same {@link CheckpointBatch} is safe (same event ids).
 */
public class LogIoException extends CheckpointException {
    public LogIoException(String message, Throwable cause) {
        super(message, cause);
    }
}
