package dev.vigilo.storage;

/**
 * A storage configuration cannot be used: unreadable, not TOML (the message carries line and column), or a
 * binding is incomplete or names an unknown kind. The message names the file and the offending entry.
 */
public final class StorageConfigException extends StorageException {
    public StorageConfigException(String message) {
        super(message);
    }

    public StorageConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
