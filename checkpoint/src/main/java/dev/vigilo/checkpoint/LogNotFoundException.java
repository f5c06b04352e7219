package dev.vigilo.checkpoint;

/** No checkpoint log exists at the requested location. */
public class LogNotFoundException extends CheckpointException {
    public LogNotFoundException(String message) {
        super(message);
    }
}
