package dev.vigilo.control;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/**
 * A real PostgreSQL 17 for tests, shared by every test of one JVM: an in-process zonky {@link EmbeddedPostgres},
 * started on first use (a few seconds; longer the very first time, when the binaries are unpacked) and stopped when
 * the JVM exits. Tests isolate themselves by asking for a fresh database each.
 *
 * <p>Shipped in the control module's test-jar for the other modules' tests:
 * {@code ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()))}.
 */
public final class TestPostgres {

    private TestPostgres() {}

    /**
     * Creates an empty database with a unique name and returns its JDBC URL (user {@code postgres}, trust
     * authentication, so no password).
     *
     * @throws IllegalStateException if the server cannot be started or the database cannot be created
     */
    public static String newDatabaseUrl() {
        EmbeddedPostgres postgres = Holder.POSTGRES;
        String name = "test_" + UUID.randomUUID().toString().replace("-", "");
        try (Connection connection = postgres.getPostgresDatabase().getConnection();
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "cannot create test database " + name + " on port " + postgres.getPort(), e);
        }
        return postgres.getJdbcUrl("postgres", name);
    }

    /** Lazy, thread-safe, once per JVM: the class is initialized on first access to the field. */
    private static final class Holder {
        static final EmbeddedPostgres POSTGRES = start();

        private static EmbeddedPostgres start() {
            try {
                // zonky's own shutdown hook stops the server and deletes its temporary data directory.
                return EmbeddedPostgres.builder().start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start the test PostgreSQL server", e);
            }
        }
    }
}
