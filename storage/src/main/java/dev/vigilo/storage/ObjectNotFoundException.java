package dev.vigilo.storage;

import dev.vigilo.common.errors.NotFoundException;
import java.util.Objects;

/** The object a read expected does not exist. Kind NOT_FOUND; {@link #key()} names the object. */
public final class ObjectNotFoundException extends NotFoundException {
    private static final long serialVersionUID = 1L;

    private final transient ObjectKey key;

    public ObjectNotFoundException(ObjectKey key) {
        super("object " + Objects.requireNonNull(key, "key") + " does not exist");
        this.key = key;
    }

    public ObjectKey key() {
        return key;
    }
}
