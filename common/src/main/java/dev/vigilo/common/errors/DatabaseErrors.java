package dev.vigilo.common.errors;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.List;
import java.util.Optional;

/**
 * The one classification of JDBC failures that mean a database is unavailable, rather than that a statement was wrong
 * (a bug): it cannot be reached or refuses connections (SQLSTATE class {@code 08}), lacks resources such as connection
 * slots (class {@code 53}), is shutting down, restarting or not yet accepting connections ({@code 57P}), or the pool
 * gave up waiting for a connection ({@link SQLTransientConnectionException}). Any of these anywhere in a cause chain
 * counts: Jdbi and the pool wrap the driver's exception.
 *
 * <p>Every module that reports a database failure classifies it here, so a lost database is {@link ErrorKind#UNAVAILABLE}
 * everywhere (exit 5 on the command line, 503 from the dashboard) and never an internal error. Stateless.
 */
public final class DatabaseErrors {
    private static final List<String> UNAVAILABLE_SQL_STATES = List.of("08", "53", "57P");

    private DatabaseErrors() {}

    /** Whether {@code e} or one of its causes says the database is unavailable (see the class comment). */
    public static boolean isUnavailable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLTransientConnectionException) {
                return true;
            }
            if (t instanceof SQLException sql
                    && sql.getSQLState() != null
                    && UNAVAILABLE_SQL_STATES.stream().anyMatch(sql.getSQLState()::startsWith)) {
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
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
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
