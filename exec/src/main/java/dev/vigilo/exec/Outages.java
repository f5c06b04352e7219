package dev.vigilo.exec;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.DatabaseErrors;
import dev.vigilo.common.errors.ErrorKind;
import dev.vigilo.common.errors.VigiloException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.file.FileSystemException;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Optional;
import org.jdbi.v3.core.JdbiException;

/**
 * The one place that decides whether a failure is an outage of a service (the store or a database could not be
 * reached, ran out of space, became read-only, or timed out) rather than an error of the chunk being executed
 * (docs/execution.md, "Outages"). Workers wait out outages without counting a chunk attempt; everything else keeps
 * the chunk's retry path.
 *
 * <p>Rules, in order, over the failure and its causes:
 *
 * <ol>
 *   <li>A cancellation (an interrupt, {@link CancelledException}) is never an outage.
 *   <li>A {@link VigiloException} decides by the outermost one's kind: only {@link ErrorKind#UNAVAILABLE} can be an
 *       outage (damage, conflicts, invalid input are the chunk's or the plan's own errors).
 *   <li>A JDBC failure is a database outage when {@link DatabaseErrors#isUnavailable} says the database is
 *       unavailable for now (the one classification, shared with the command line and the dashboard); any other
 *       SQL failure (a constraint, a syntax error) is a bug or bad data, not an outage. A Jdbi failure without an SQL
 *       cause (it could not get or close a connection) is a database outage.
 *   <li>Any other {@code UNAVAILABLE} failure comes from the object store (an I/O error, a full or read-only
 *       filesystem, an S3 endpoint that does not answer or answers 5xx, a read past its deadline): a store outage.
 *   <li>A bare filesystem error whose reason is a full disk, an exceeded quota or a read-only filesystem is a store
 *       outage.
 * </ol>
 */
public final class Outages {
    private Outages() {}

    /** The service {@code failure} says is out, or empty when it is not an outage. */
    public static Optional<Service> classify(Throwable failure) {
        if (failure == null || cancelled(failure)) {
            return Optional.empty();
        }
        VigiloException outermost = outermostVigilo(failure);
        if (outermost != null && outermost.kind() != ErrorKind.UNAVAILABLE) {
            return Optional.empty();
        }
        SQLException sql = cause(failure, SQLException.class);
        if (sql != null) {
            return DatabaseErrors.isUnavailable(failure) ? Optional.of(Service.DATABASE) : Optional.empty();
        }
        if (cause(failure, JdbiException.class) != null) {
            return Optional.of(Service.DATABASE);
        }
        if (outermost != null) {
            return Optional.of(Service.STORE);
        }
        FileSystemException fs = cause(failure, FileSystemException.class);
        if (fs != null && fs.getReason() != null && storageExhausted(fs.getReason())) {
            return Optional.of(Service.STORE);
        }
        return Optional.empty();
    }

    /** Whether {@code failure} is an outage of {@code service}. */
    public static boolean isOutageOf(Service service, Throwable failure) {
        return classify(failure).filter(service::equals).isPresent();
    }

    private static boolean cancelled(Throwable failure) {
        for (Throwable t = failure; t != null; t = next(t)) {
            if (t instanceof CancelledException
                    || t instanceof InterruptedException
                    || t instanceof ClosedByInterruptException) {
                return true;
            }
        }
        return false;
    }

    private static VigiloException outermostVigilo(Throwable failure) {
        return cause(failure, VigiloException.class);
    }

    private static boolean storageExhausted(String reason) {
        String r = reason.toLowerCase(Locale.ROOT);
        return r.contains("no space left") || r.contains("quota exceeded") || r.contains("read-only file system");
    }

    private static <T extends Throwable> T cause(Throwable failure, Class<T> type) {
        for (Throwable t = failure; t != null; t = next(t)) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    private static Throwable next(Throwable t) {
        Throwable c = t.getCause();
        return c == t ? null : c;
    }
}
