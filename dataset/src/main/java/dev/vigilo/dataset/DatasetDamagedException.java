package dev.vigilo.dataset;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.storage.ObjectKey;
import java.util.Objects;

/**
 * A stored dataset file is missing, fails its digest, or its content contradicts the index or the catalog entry.
 * {@link #key()} names the first damaged object found. Kind DAMAGED.
 */
public final class DatasetDamagedException extends DamagedException {
    private static final long serialVersionUID = 1L;
    private final transient ObjectKey key;

    public DatasetDamagedException(ObjectKey key, String detail) {
        super("damaged dataset object " + Objects.requireNonNull(key, "key") + ": " + detail);
        this.key = key;
    }

    public DatasetDamagedException(ObjectKey key, String detail, Throwable cause) {
        super("damaged dataset object " + Objects.requireNonNull(key, "key") + ": " + detail, cause);
        this.key = key;
    }

    public ObjectKey key() {
        return key;
    }
}
