package dev.vigilo.control;

import com.zaxxer.hikari.HikariDataSource;
import dev.vigilo.common.errors.Causes;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.common.errors.Secrets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.flywaydb.core.api.FlywayException;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.postgres.PostgresPlugin;

/**
 * An open control database: migrated to the schema of every Vigilo module on the class path, pooled, and reachable
 * through {@link Jdbi} (the one data-access style for every table) with the PostgreSQL plugin installed.
 *
 * <p>{@link #open(ControlSettings)} either returns a ready database or throws {@link ControlDatabaseException};
 * nothing is left open after a failure. Instances are thread-safe. {@link #close()} closes the pool and then
 * releases this process's hold on an embedded server (which stops by itself once no process holds it); it is
 * idempotent. After close, {@link #jdbi()} and {@link #dataSource()} fail on use.
 */
public final class ControlDatabase implements AutoCloseable {

    private final HikariDataSource pool;
    private final Jdbi jdbi;
    private final String jdbcUrl;
    private final String description;
    private final AutoCloseable serverHold;
    private final AtomicBoolean closed = new AtomicBoolean();

    private ControlDatabase(HikariDataSource pool, String jdbcUrl, String description, AutoCloseable serverHold) {
        this.pool = pool;
        this.jdbcUrl = jdbcUrl;
        this.jdbi = Jdbi.create(pool).installPlugin(new PostgresPlugin());
        this.description = description;
        this.serverHold = serverHold;
    }

    /**
     * Opens the control database: for {@link ControlSettings.Embedded}, joins the machine's shared embedded server
     * for that directory (starting it if needed); then connects, and applies pending migrations from
     * {@code classpath:db/migration}.
     *
     * @throws ControlDatabaseException if the server is unreachable, the embedded server cannot be started, or a
     *                                  migration fails
     */
    public static ControlDatabase open(ControlSettings settings) {
        return open(settings, List.of(Migrations.DEFAULT_LOCATION), EmbeddedOptions.fromSystemProperties());
    }

    /** As {@link #open(ControlSettings)}, with explicit migration locations and embedded-server tuning (tests). */
    static ControlDatabase open(ControlSettings settings, List<String> migrationLocations, EmbeddedOptions options) {
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(migrationLocations, "migrationLocations");
        Objects.requireNonNull(options, "options");
        if (settings instanceof ControlSettings.Jdbc jdbc) {
            return connect(jdbc.url(), Target.server(Secrets.mask(jdbc.url())), migrationLocations, () -> {});
        }
        ControlSettings.Embedded embedded = (ControlSettings.Embedded) settings;
        EmbeddedServer.Lease lease = EmbeddedServer.acquire(embedded.directory(), options);
        try {
            Target target = Target.embedded(embedded.directory().toString(), lease.port());
            return connect(lease.jdbcUrl(), target, migrationLocations, lease);
        } catch (RuntimeException e) {
            lease.close();
            throw e;
        }
    }

    private static ControlDatabase connect(
            String url, Target target, List<String> locations, AutoCloseable serverHold) {
        HikariDataSource pool;
        try {
            pool = Pools.create(url);
        } catch (RuntimeException e) {
            throw new ControlDatabaseException(
                    target.where(),
                    "Cannot connect to the " + target.noun() + " at " + target.where() + ": " + Causes.rootMessage(e)
                            + ". " + target.advice(),
                    e);
        }
        try {
            String version = serverVersion(pool);
            Migrations.migrate(pool, locations);
            return new ControlDatabase(pool, url, target.describe(version), serverHold);
        } catch (FlywayException e) {
            pool.close();
            throw new ControlDatabaseException(
                    target.where(),
                    "Migrating the " + target.noun() + " at " + target.where()
                            + " failed: " + e.getMessage()
                            + "; each migration runs in its own transaction, so the failing one left no partial"
                            + " changes (unless it opted out of transactions): fix the migration or the database and retry.",
                    e);
        } catch (SQLException | RuntimeException e) {
            pool.close();
            throw new ControlDatabaseException(
                    target.where(),
                    "Cannot use the " + target.noun() + " at " + target.where() + ": " + Causes.rootMessage(e) + ". "
                            + target.advice(),
                    e);
        }
    }

    private static String serverVersion(DataSource dataSource) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            return connection.getMetaData().getDatabaseProductVersion();
        }
    }

    /** @return the shared Jdbi, with the PostgreSQL plugin installed */
    public Jdbi jdbi() {
        return jdbi;
    }

    /**
     * Opens a module's own schema on this database's server (for example the default execution database, schema
     * {@code vigilo_exec}), with its own pool and migration history. Close it before closing this database.
     *
     * @see SchemaDatabase#open
     */
    public SchemaDatabase openSchema(String name, String schema, String migrationLocation, int poolSize) {
        return SchemaDatabase.open(name, jdbcUrl, null, schema, migrationLocation, poolSize);
    }

    /**
     * The credential of this database's connection: the {@code password} parameter of its JDBC URL, if it has one
     * (the embedded server has none). Child commands inherit the variable the URL came from, so whoever records what
     * they print masks this value too.
     */
    public SecretValues credentials() {
        SecretValues out = SecretValues.NONE;
        // As written in the URL (what a child command sees in the variable) and as the driver decodes it.
        Matcher written = PASSWORD_PARAMETER.matcher(jdbcUrl);
        while (written.find()) {
            if (!written.group(1).isEmpty()) {
                out = out.and(written.group(1));
            }
        }
        try {
            Properties parsed = org.postgresql.Driver.parseURL(jdbcUrl, null);
            String password = parsed == null ? null : parsed.getProperty("password");
            return password == null || password.isEmpty() ? out : out.and(password);
        } catch (RuntimeException e) {
            return out;
        }
    }

    private static final Pattern PASSWORD_PARAMETER = Pattern.compile("[?&;]password=([^&;]*)");

    /** @return the connection pool (at most {@value Pools#MAX_POOL_SIZE} connections) */
    public DataSource dataSource() {
        return pool;
    }

    /**
     * @return where this database lives, safe to print: e.g. {@code embedded PostgreSQL 17.6 at /home/u/.vigilo/postgres
     *         (port 41234)} or {@code PostgreSQL 16.2 at jdbc:postgresql://db/vigilo?user=v&password=***}
     */
    public String description() {
        return description;
    }

    /** Closes the pool, then releases this process's hold on the embedded server, if any. Idempotent. */
    @Override
    public void close() {
        if (closed.getAndSet(true)) {
            return;
        }
        try {
            pool.close();
        } finally {
            try {
                serverHold.close();
            } catch (Exception e) {
                // Releasing the hold only deletes a file; if that fails the host notices this process's exit instead.
            }
        }
    }

    @Override
    public String toString() {
        return "ControlDatabase[" + description + "]";
    }

    /** What the messages say about the database: where it is, and what the user can do if it fails. */
    private record Target(String where, boolean embedded, int port) {

        static Target server(String redactedUrl) {
            return new Target(redactedUrl, false, 0);
        }

        static Target embedded(String directory, int port) {
            return new Target(directory, true, port);
        }

        String noun() {
            return embedded ? "embedded control database" : "control database";
        }

        String advice() {
            return embedded
                    ? "See " + where + "/server.log, or use an existing server with --control-db / VIGILO_CONTROL_DB."
                    : "Check --control-db / VIGILO_CONTROL_DB (host, port, database, user, password) and that the server is running.";
        }

        String describe(String version) {
            return embedded
                    ? "embedded PostgreSQL " + version + " at " + where + " (port " + port + ")"
                    : "PostgreSQL " + version + " at " + where;
        }
    }
}
