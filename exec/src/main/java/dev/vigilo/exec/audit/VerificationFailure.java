package dev.vigilo.exec.audit;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.dataset.DatasetDamagedException;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectNotFoundException;
import java.util.Optional;

/**
 * A check of {@code vigilo verify} that failed: the stored object whose bytes or contents disagree with what
 * references it (when one object is to blame) and what disagrees, with the figures. Kind: damaged.
 */
final class VerificationFailure extends DamagedException {
    private static final long serialVersionUID = 1L;

    private final transient String key;

    /**
     * @param key     the object to blame, or null when the disagreement is between records (figures)
     * @param message what disagrees, with both figures
     */
    VerificationFailure(String key, String message) {
        super(message);
        this.key = key;
    }

    /** The object to blame, if one is. */
    Optional<String> key() {
        return Optional.ofNullable(key);
    }

    /** The object a damage report names: from a {@link VerificationFailure} or a storage or dataset error in the chain. */
    static Optional<String> keyOf(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof VerificationFailure v && v.key().isPresent()) {
                return v.key();
            }
            if (t instanceof DatasetDamagedException d) {
                return Optional.of(d.key().value());
            }
            if (t instanceof ObjectIntegrityException i) {
                return Optional.of(i.key().value());
            }
            if (t instanceof ObjectNotFoundException n) {
                return Optional.of(n.key().value());
            }
        }
        return Optional.empty();
    }
}
