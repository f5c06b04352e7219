package dev.vigilo.common.errors;

import java.util.Objects;

/**
 * Base of every error Vigilo reports on purpose. Its {@link #kind()} says what the caller can do; its message says
 * what went wrong, where, and what to do next, in one line. An exception that is not a {@code VigiloException}
 * reaching the command line is a bug.
 *
 * <p>Modules throw the kind classes of this package directly ({@link InvalidInputException},
 * {@link NotFoundException}, ...) or subclass one of them when a caller needs a typed detail (for example the
 * object key of a missing object).
 */
public abstract class VigiloException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorKind kind;

    protected VigiloException(ErrorKind kind, String message) {
        super(message);
        this.kind = Objects.requireNonNull(kind, "kind");
    }

    protected VigiloException(ErrorKind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = Objects.requireNonNull(kind, "kind");
    }

    /** What kind of failure this is. */
    public final ErrorKind kind() {
        return kind;
    }
}
