package dev.vigilo.checkpoint;

/**
 * Root of the checkpoint module's exceptions. Unchecked: callers usually cannot recover locally.
 */
public class CheckpointException extends RuntimeException {
    public CheckpointException(String message) {
        super(message);
    }

    public CheckpointException(String message, Throwable cause) {
        super(message, cause);
    }
}
