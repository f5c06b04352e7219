package dev.vigilo.control;

import dev.vigilo.common.errors.UnavailableException;
import java.util.Objects;

/**
 * The control database could not be opened: the server is unreachable, a migration failed, or the embedded server
 * could not be started or joined. The message says what failed, where, and what the user can do about it;
 * {@link #target()} names the database concerned (a password-free URL or the embedded server's directory). Kind
 * UNAVAILABLE: retrying after fixing the server or the URL may help.
 */
public class ControlDatabaseException extends UnavailableException {

    private static final long serialVersionUID = 1L;

    private final String target;

    /**
     * @param target  the database concerned, safe to print (no password)
     * @param message what failed and what to do about it
     * @param cause   the underlying failure, or {@code null}
     */
    public ControlDatabaseException(String target, String message, Throwable cause) {
        super(Objects.requireNonNull(message, "message"), cause);
        this.target = Objects.requireNonNull(target, "target");
    }

    /** @return the database concerned: a password-free JDBC URL or the embedded server's directory */
    public String target() {
        return target;
    }
}
