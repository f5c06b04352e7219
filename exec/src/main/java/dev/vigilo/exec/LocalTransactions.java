package dev.vigilo.exec;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.Causes;
import dev.vigilo.common.errors.DatabaseErrors;
import dev.vigilo.common.errors.UnavailableException;
import java.time.Duration;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;

/**
 * Bounded transactions on an execution database: each runs under an outer deadline that covers the pool wait, lock
 * waits and every statement (PostgreSQL's {@code statement_timeout} and {@code lock_timeout}, set to what is left of
 * the deadline), and rolls back when it fails, times out or the thread is interrupted. Committed work stays; nothing
 * of a failed transaction does.
 */
public final class LocalTransactions {
    /** The spec's outer deadline for one local database operation. */
    static final Duration DEADLINE = Duration.ofSeconds(30);

    private LocalTransactions() {}

    /**
     * Runs {@code callback} in one transaction on {@code jdbi} within {@link #DEADLINE}.
     *
     * @param what names the operation and database for messages
     * @throws UnavailableException when the database fails or the deadline passes (nothing of it was committed, or,
     *                              if the commit itself failed, its outcome is unknown and the caller must replay)
     * @throws CancelledException   when the thread was interrupted
     */
    public static <T> T inTransaction(Jdbi jdbi, String what, HandleCallback<T, RuntimeException> callback) {
        return run(jdbi, what, false, callback);
    }

    /**
     * Like {@link #inTransaction}, as one {@code REPEATABLE READ} transaction: every statement of
     * {@code callback} sees the same snapshot (sums and lists read by separate statements agree with each other).
     */
    public static <T> T inSnapshot(Jdbi jdbi, String what, HandleCallback<T, RuntimeException> callback) {
        return run(jdbi, what, true, callback);
    }

    private static <T> T run(Jdbi jdbi, String what, boolean snapshot, HandleCallback<T, RuntimeException> callback) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        if (Thread.currentThread().isInterrupted()) {
            throw new CancelledException(what + " was cancelled");
        }
        HandleCallback<T, RuntimeException> bounded = h -> {
            bound(h, deadline);
            return callback.withHandle(h);
        };
        try {
            return snapshot
                    ? jdbi.inTransaction(TransactionIsolationLevel.REPEATABLE_READ, bounded)
                    : jdbi.inTransaction(bounded);
        } catch (JdbiException e) {
            if (Thread.currentThread().isInterrupted()) {
                throw new CancelledException(what + " was cancelled; its transaction was rolled back", e);
            }
            if (System.nanoTime() - deadline > 0 || isTimeout(e)) {
                throw new UnavailableException(
                        what + " did not finish within " + DEADLINE.toSeconds() + " s and was rolled back; it is"
                                + " retried",
                        e);
            }
            throw new UnavailableException(
                    what + " failed: " + rootMessage(e)
                            + (DatabaseErrors.isUnavailable(e)
                                    ? "; check that the database is running and reachable, then repeat"
                                    : ""),
                    e);
        }
    }

    /** Sets the statement and lock timeouts of the open transaction to what is left of {@code deadline}. */
    static void bound(Handle h, long deadline) {
        long ms = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
        h.execute(
                "SELECT set_config('statement_timeout', ?, true), set_config('lock_timeout', ?, true)",
                ms + "ms",
                ms + "ms");
    }

    private static boolean isTimeout(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.sql.SQLException s
                    && ("57014".equals(s.getSQLState()) || "55P03".equals(s.getSQLState()))) {
                return true;
            }
        }
        return false;
    }

    public static String rootMessage(Throwable e) {
        return Causes.rootMessage(e);
    }
}
