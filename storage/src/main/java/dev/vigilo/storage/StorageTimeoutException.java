package dev.vigilo.storage;

/** A call ran past its {@link Deadline}. Whether a write took effect is unknown; retrying the same bytes is safe. */
public final class StorageTimeoutException extends StorageException {
    public StorageTimeoutException(String message) {
        super(message);
    }

    public StorageTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }
}
