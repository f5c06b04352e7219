package dev.vigilo.control;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * A real PostgreSQL 17 for tests, shared by every test of one JVM: an in-process zonky {@link EmbeddedPostgres},
 * started on first use (a few seconds; longer the very first time, when the binaries are unpacked) and stopped when
 * the JVM exits. Tests isolate themselves by asking for a fresh database each.
 *
 * <p>Shipped in the control module's test-jar for the other modules' tests:
 * {@code ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()))}. Tests that need databases on
 * independent servers (several execution databases) use {@link #newDatabaseUrl(int)}; tests that stop a server use a
 * {@link #startPrivateServer() private} one, so no other test loses its databases.
 */
public final class TestPostgres {
    /** Shared servers a test may ask for: 0 (the default) and 1. */
    public static final int SERVERS = 2;

    private TestPostgres() {}

    /**
     * Creates an empty database with a unique name on the default server and returns its JDBC URL (user
     * {@code postgres}, trust authentication, so no password).
     *
     * @throws IllegalStateException if the server cannot be started or the database cannot be created
     */
    public static String newDatabaseUrl() {
        return newDatabaseUrl(0);
    }

    /**
     * Like {@link #newDatabaseUrl()}, on shared server {@code server} (0 .. {@link #SERVERS} - 1): each is a separate
     * PostgreSQL process with its own port and data directory, started on first use and stopped when the JVM exits.
     */
    public static String newDatabaseUrl(int server) {
        return switch (server) {
            case 0 -> createDatabase(Holder.POSTGRES);
            case 1 -> createDatabase(Second.POSTGRES);
            default -> throw new IllegalArgumentException("shared test servers are 0.." + (SERVERS - 1));
        };
    }

    /**
     * Creates a database on the default server as a copy of the database at {@code url} (on the same server, with no
     * open connection: PostgreSQL copies a template only while nobody is connected to it) and returns its JDBC URL.
     * Cheaper than migrating and filling a new database when many tests start from the same state.
     */
    public static String copyOfDatabase(String url) {
        EmbeddedPostgres postgres = Holder.POSTGRES;
        String at = ":" + postgres.getPort() + "/";
        int start = url.indexOf(at);
        if (start < 0) {
            throw new IllegalArgumentException(url + " is not a database of the default test server");
        }
        String template = url.substring(start + at.length()).replaceAll("[?].*", "");
        String name = "test_" + UUID.randomUUID().toString().replace("-", "");
        try (Connection connection = postgres.getPostgresDatabase().getConnection();
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE " + name + " TEMPLATE " + template);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot copy test database " + template + " to " + name, e);
        }
        return postgres.getJdbcUrl("postgres", name);
    }

    /**
     * Starts a server of the caller's own, which the caller may stop (to test an unreachable database) and start
     * again. Closing the returned handle stops the server and deletes its data.
     */
    public static PrivateServer startPrivateServer() {
        try {
            return new PrivateServer(Files.createTempDirectory("vigilo-test-pg"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a data directory for a private test PostgreSQL server", e);
        }
    }

    /**
     * A server owned by one test: {@link #stop()} takes it down with its data kept, {@link #restart()} brings it back
     * on the same port (as a restarted database server), {@link #close()} stops it and deletes its data.
     */
    public static final class PrivateServer implements AutoCloseable {
        private final Path dataDirectory;
        private EmbeddedPostgres postgres;
        private int port;

        private PrivateServer(Path dataDirectory) {
            this.dataDirectory = dataDirectory;
            this.postgres = launch(EmbeddedPostgres.builder());
            this.port = postgres.getPort();
        }

        private EmbeddedPostgres launch(EmbeddedPostgres.Builder builder) {
            try {
                return builder.setDataDirectory(dataDirectory)
                        .setCleanDataDirectory(false)
                        .start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start a private test PostgreSQL server", e);
            }
        }

        /** Creates an empty database on this server and returns its JDBC URL. */
        public synchronized String newDatabaseUrl() {
            return createDatabase(running());
        }

        /** The server's port (a closed port while stopped). */
        public synchronized int port() {
            return port;
        }

        /** Stops the server, keeping its data; connections to it fail until {@link #restart()}. Idempotent. */
        public synchronized void stop() {
            if (postgres == null) {
                return;
            }
            try {
                postgres.close();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot stop the private test PostgreSQL server", e);
            } finally {
                postgres = null;
            }
        }

        /** Starts the stopped server again on the same port with the same data. */
        public synchronized void restart() {
            if (postgres == null) {
                postgres = launch(EmbeddedPostgres.builder().setPort(port));
            }
        }

        private EmbeddedPostgres running() {
            if (postgres == null) {
                throw new IllegalStateException("the private test PostgreSQL server is stopped");
            }
            return postgres;
        }

        /** Stops the server and deletes its data. Idempotent. */
        @Override
        public synchronized void close() {
            stop();
            try (Stream<Path> paths = Files.exists(dataDirectory) ? Files.walk(dataDirectory) : Stream.empty()) {
                for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(path);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot delete " + dataDirectory, e);
            }
        }
    }

    private static String createDatabase(EmbeddedPostgres postgres) {
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

    private static EmbeddedPostgres start() {
        try {
            // zonky's own shutdown hook stops the server and deletes its temporary data directory.
            return EmbeddedPostgres.builder().start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start a test PostgreSQL server", e);
        }
    }

    /** Lazy, thread-safe, once per JVM: the class is initialized on first access to the field. */
    private static final class Holder {
        static final EmbeddedPostgres POSTGRES = start();
    }

    /** The second shared server, likewise lazy. */
    private static final class Second {
        static final EmbeddedPostgres POSTGRES = start();
    }
}
