package dev.vigilo.exec;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/**
 * A PostgreSQL server of one test that can be stopped and started again on the same port and data directory, so that
 * its databases go away and come back with everything they committed (an outage, not a loss).
 */
final class RestartablePostgres implements AutoCloseable {
    private final Path data;
    private final int port;
    private EmbeddedPostgres postgres;

    private RestartablePostgres(Path data, EmbeddedPostgres postgres) {
        this.data = data;
        this.postgres = postgres;
        this.port = postgres.getPort();
    }

    /** Starts a server keeping its data in {@code data} (created by the first start). */
    static RestartablePostgres start(Path data) throws IOException {
        return new RestartablePostgres(data, builder(data).start());
    }

    private static EmbeddedPostgres.Builder builder(Path data) {
        return EmbeddedPostgres.builder().setDataDirectory(data).setCleanDataDirectory(false);
    }

    /** Creates an empty database and returns its JDBC URL (user postgres, no password). */
    synchronized String newDatabaseUrl() throws SQLException {
        String name = "test_" + UUID.randomUUID().toString().replace("-", "");
        try (Connection c = postgres.getPostgresDatabase().getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        }
        return postgres.getJdbcUrl("postgres", name);
    }

    /** Stops the server (fast shutdown: open transactions are rolled back, connections dropped). */
    synchronized void stop() throws IOException {
        if (postgres != null) {
            postgres.close();
            postgres = null;
        }
    }

    /** Starts the stopped server again on the same port and data directory. */
    synchronized void restart() throws IOException {
        if (postgres == null) {
            postgres = builder(data).setPort(port).start();
        }
    }

    @Override
    public void close() throws IOException {
        stop();
    }
}
