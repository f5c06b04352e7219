package dev.vigilo.storage;

/**
 * Base of every error an {@link ObjectStore} throws. Subclasses say whether retrying can help:
 * {@link ObjectConflictException} and {@link ObjectIntegrityException} are final verdicts about the data,
 * {@link StorageTimeoutException}, {@link StorageCancelledException} and {@link StorageUnavailableException}
 * are about the attempt.
 */
public class StorageException extends RuntimeException {
    public StorageException(String message) {
        super(message);
    }

    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }
}
