package dev.vigilo.datagen;

/** Root of the datagen module's exceptions. */
public class DatagenException extends RuntimeException {
    public DatagenException(String message) {
        super(message);
    }

    public DatagenException(String message, Throwable cause) {
        super(message, cause);
    }
}
