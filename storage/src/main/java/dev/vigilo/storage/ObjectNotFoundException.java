package dev.vigilo.storage;

import java.util.Objects;

/** The object a read expected does not exist. */
public final class ObjectNotFoundException extends StorageException {
    private final ObjectKey key;

    public ObjectNotFoundException(ObjectKey key) {
        super("object " + Objects.requireNonNull(key, "key") + " does not exist");
        this.key = key;
    }

    public ObjectKey key() {
        return key;
    }
}
