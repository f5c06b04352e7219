package dev.vigilo.storage;

/** The store could not be reached or failed the request (I/O error, network error, 5xx). Retrying may help. */
public final class StorageUnavailableException extends StorageException {
    public StorageUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
