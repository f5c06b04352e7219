package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectKey;
import java.nio.file.FileSystemException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Optional;
import org.jdbi.v3.core.ConnectionException;
import org.jdbi.v3.core.statement.UnableToExecuteStatementException;
import org.junit.jupiter.api.Test;

/** What counts as an outage (waited out, no attempt) and what stays an error of the chunk. */
class OutagesTest {
    private static UnavailableException database(String sqlState) {
        return new UnavailableException(
                "completion of chunk 3 failed",
                new UnableToExecuteStatementException(new SQLException("boom", sqlState), null));
    }

    @Test
    void unreachableFullOrReadOnlyDatabasesAreDatabaseOutages() {
        for (String state : new String[] {
            "08006", "08001", "57P01", "57P03", "53100", "58030", "25006", "40001", "40P01", "55P03", "57014"
        }) {
            assertThat(Outages.classify(database(state))).as(state).contains(Service.DATABASE);
        }
        // The pool gave up waiting for a connection: Jdbi wraps Hikari's exception.
        assertThat(Outages.classify(new ConnectionException(new SQLTransientConnectionException("pool timeout"))))
                .contains(Service.DATABASE);
        assertThat(Outages.classify(new UnavailableException("x", new ConnectionException(new RuntimeException()))))
                .contains(Service.DATABASE);
    }

    @Test
    void otherDatabaseErrorsAreNotOutages() {
        // A constraint or a syntax error is a bug or bad data: waiting cannot cure it.
        assertThat(Outages.classify(database("23505"))).isEmpty();
        assertThat(Outages.classify(database("42601"))).isEmpty();
    }

    @Test
    void unavailableStoresAndFullOrReadOnlyFilesystemsAreStoreOutages() {
        assertThat(Outages.classify(new UnavailableException(
                        "cannot write /x: No space left on device",
                        new FileSystemException("/x", null, "No space left on device"))))
                .contains(Service.STORE);
        assertThat(Outages.classify(new UnavailableException("read of k from s3:... failed: HTTP 503")))
                .contains(Service.STORE);
        assertThat(Outages.classify(
                        new java.io.UncheckedIOException(new FileSystemException("/x", null, "Read-only file system"))))
                .contains(Service.STORE);
        assertThat(Outages.classify(
                        new java.io.UncheckedIOException(new FileSystemException("/x", null, "Permission denied"))))
                .isEmpty();
    }

    @Test
    void theChunksOwnErrorsAndCancellationsAreNotOutages() {
        assertThat(Outages.classify(new DamagedException("chunk file altered"))).isEmpty();
        assertThat(Outages.classify(new ObjectIntegrityException(ObjectKey.of("a/b"), "SHA-256 differs")))
                .isEmpty();
        assertThat(Outages.classify(new ConflictException("key holds other bytes")))
                .isEmpty();
        assertThat(Outages.classify(new InvalidInputException("bad configuration")))
                .isEmpty();
        assertThat(Outages.classify(new IllegalStateException("a bug"))).isEmpty();
        // The outermost kind decides: damage found while reading over a flaky store is damage.
        assertThat(Outages.classify(new DamagedException("bad", new UnavailableException("down"))))
                .isEmpty();
        assertThat(Outages.classify(new CancelledException("stopped", new UnavailableException("down"))))
                .isEmpty();
        assertThat(Outages.classify(new UnavailableException("x", new InterruptedException())))
                .isEmpty();
    }

    @Test
    void isOutageOfMatchesTheService() {
        assertThat(Outages.isOutageOf(Service.DATABASE, database("08006"))).isTrue();
        assertThat(Outages.isOutageOf(Service.STORE, database("08006"))).isFalse();
        assertThat(Outages.classify(null)).isEqualTo(Optional.empty());
    }
}
