package dev.vigilo.common.errors;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The one classification of JDBC failures that mean a database is unavailable for now, rather than that a statement
 * was wrong (a bug or bad data): retrying the same work later may succeed. A failure counts when an SQL exception in
 * its cause chain (Jdbi and the pool wrap the driver's) has one of these SQLSTATEs:
 *
 * <ul>
 *   <li>class {@code 08}: the server cannot be reached or refused or lost the connection;
 *   <li>class {@code 53}: insufficient resources (disk full, out of memory, too many connections);
 *   <li>class {@code 57}: operator intervention (shutting down, starting up, a statement cancelled or timed out);
 *   <li>class {@code 58}: a system error of the server (I/O);
 *   <li>{@code 25006}: a read-only transaction (a standby, a server made read-only);
 *   <li>{@code 40001}, {@code 40P01}, {@code 55P03}: a serialization failure, a deadlock, a lock timeout;
 * </ul>
 *
 * or has no SQLSTATE but is transient or recoverable ({@link SQLTransientException}, {@link SQLRecoverableException}:
 * the pool gave up waiting for a connection). Any other SQLSTATE (a constraint, a syntax error) is not unavailability.
 *
 * <p>Every module that reports a database failure classifies it here, so a lost database is {@link ErrorKind#UNAVAILABLE}
 * everywhere (exit 5 on the command line, 503 from the dashboard, a wait in a worker) and never an internal error.
 * Stateless.
 */
public final class DatabaseErrors {
    private static final List<String> UNAVAILABLE_CLASSES = List.of("08", "53", "57", "58");
    private static final Set<String> UNAVAILABLE_STATES = Set.of("25006", "40001", "40P01", "55P03");

    private DatabaseErrors() {}

    /** Whether {@code e} or one of its causes says the database is unavailable (see the class comment). */
    public static boolean isUnavailable(Throwable e) {
        for (Throwable t : Causes.chain(e)) {
            if (!(t instanceof SQLException sql)) {
                continue;
            }
            String state = sql.getSQLState();
            if (state == null) {
                if (sql instanceof SQLTransientException || sql instanceof SQLRecoverableException) {
                    return true;
                }
            } else if (UNAVAILABLE_STATES.contains(state)
                    || UNAVAILABLE_CLASSES.stream().anyMatch(state::startsWith)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code e} as an {@link UnavailableException} when it {@linkplain #isUnavailable says the database is
     * unavailable}: one line, {@code the <database> is unavailable (<driver's words>); check that it is running, then
     * <retry>}, with no class name, SQL text or credential. Empty for any other failure.
     *
     * @param database what the message calls the database, e.g. {@code control database}
     * @param retry    what the user does once it is back, e.g. {@code repeat the command}
     */
    public static Optional<UnavailableException> unavailable(Throwable e, String database, String retry) {
        if (!isUnavailable(e)) {
            return Optional.empty();
        }
        return Optional.of(new UnavailableException(
                "the " + database + " is unavailable (" + detail(e) + "); check that it is running, then " + retry, e));
    }

    /**
     * The driver's own words about {@code e}: the first line of the innermost SQL exception's message (not the pool's
     * wrapper, not the statement), credentials masked; {@code connection lost} when no SQL exception says more.
     */
    public static String detail(Throwable e) {
        String message = null;
        for (Throwable t : Causes.chain(e)) {
            if (t instanceof SQLException sql
                    && sql.getMessage() != null
                    && !sql.getMessage().isBlank()) {
                message =
                        sql.getMessage().strip().lines().findFirst().orElse("").strip();
            }
        }
        return message == null ? "connection lost" : Secrets.mask(message);
    }
}
