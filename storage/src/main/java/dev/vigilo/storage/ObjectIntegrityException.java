package dev.vigilo.storage;

import dev.vigilo.common.errors.DamagedException;
import java.util.Objects;

/** The bytes read from a key do not match the expected length or SHA-256: the object is damaged or replaced. */
public final class ObjectIntegrityException extends DamagedException {
    private static final long serialVersionUID = 1L;

    private final transient ObjectKey key;

    public ObjectIntegrityException(ObjectKey key, String detail) {
        super("object " + Objects.requireNonNull(key, "key") + " failed verification: " + detail);
        this.key = key;
    }

    public ObjectKey key() {
        return key;
    }
}
