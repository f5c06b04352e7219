package dev.vigilo.storage;

import dev.vigilo.common.errors.ConflictException;
import java.util.Objects;

/**
 * A create-only write found different bytes already stored at its key. Immutable objects are never replaced,
 * so this is final: the caller's data disagrees with what was durably written before.
 */
public final class ObjectConflictException extends ConflictException {
    private static final long serialVersionUID = 1L;

    private final transient ObjectKey key;

    public ObjectConflictException(ObjectKey key, String detail) {
        super("object " + Objects.requireNonNull(key, "key") + " already exists with different bytes: " + detail);
        this.key = key;
    }

    public ObjectKey key() {
        return key;
    }
}
