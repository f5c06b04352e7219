package dev.vigilo.storage;

/**
 * The calling thread was interrupted during a call. Whether a write took effect is unknown; retrying the same
 * bytes is safe. The thread's interrupt flag is left set.
 */
public final class StorageCancelledException extends StorageException {
    public StorageCancelledException(String message) {
        super(message);
    }

    public StorageCancelledException(String message, Throwable cause) {
        super(message, cause);
    }
}
