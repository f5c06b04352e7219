package dev.vigilo.control;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.vigilo.common.errors.Causes;
import dev.vigilo.common.errors.Secrets;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.postgres.PostgresPlugin;

/**
 * A PostgreSQL schema owned by one Vigilo module, apart from the control tables: its own connection pool whose
 * connections use the schema, and its own Flyway history in that schema. Execution databases are opened this way,
 * either on the control database's server ({@link ControlDatabase#openSchema}) or on another server.
 *
 * <p>{@link #open} either returns a migrated, ready schema or throws {@link ControlDatabaseException}; nothing stays
 * open after a failure. Thread-safe; {@link #close()} is idempotent.
 */
public final class SchemaDatabase implements AutoCloseable {
    private static final Pattern SCHEMA = Pattern.compile("[a-z][a-z0-9_]{0,62}");

    private final HikariDataSource pool;
    private final Jdbi jdbi;
    private final String description;
    private final AtomicBoolean closed = new AtomicBoolean();

    private SchemaDatabase(HikariDataSource pool, String description) {
        this.pool = pool;
        this.jdbi = Jdbi.create(pool).installPlugin(new PostgresPlugin());
        this.description = description;
    }

    /**
     * Connects to {@code jdbcUrl}, creates {@code schema} if needed and applies the migrations found at
     * {@code migrationLocation} (for example {@code classpath:db/execution}) with a Flyway history kept in the schema.
     *
     * @param name     what the messages call this database, e.g. {@code execution database "eu-1"}
     * @param password the password, or null when the URL or the driver's defaults authenticate
     * @param poolSize the most connections this process opens to it
     * @throws ControlDatabaseException when the server is unreachable or a migration fails; the message never shows a
     *                                  password
     */
    public static SchemaDatabase open(
            String name, String jdbcUrl, String password, String schema, String migrationLocation, int poolSize) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(jdbcUrl, "jdbcUrl");
        Objects.requireNonNull(migrationLocation, "migrationLocation");
        if (!SCHEMA.matcher(schema).matches()) {
            throw new IllegalArgumentException("invalid schema name " + schema);
        }
        String where = Secrets.mask(jdbcUrl);
        HikariDataSource pool;
        try {
            HikariConfig config = new HikariConfig();
            config.setPoolName("vigilo-" + schema);
            config.setJdbcUrl(jdbcUrl);
            config.setMaximumPoolSize(poolSize);
            config.setMinimumIdle(0);
            config.setConnectionTimeout(10_000);
            config.setInitializationFailTimeout(1);
            config.setSchema(schema);
            if (password != null) {
                config.setPassword(password);
            }
            config.addDataSourceProperty("connectTimeout", Integer.toString(Pools.CONNECT_TIMEOUT_SECONDS));
            config.addDataSourceProperty("loginTimeout", Integer.toString(2 * Pools.CONNECT_TIMEOUT_SECONDS));
            config.addDataSourceProperty("ApplicationName", "vigilo");
            config.addDataSourceProperty("tcpKeepAlive", "true");
            pool = new HikariDataSource(config);
        } catch (RuntimeException e) {
            throw new ControlDatabaseException(
                    where,
                    "Cannot connect to the " + name + " at " + where + ": " + Causes.rootMessage(e)
                            + ". Check its jdbc_url in the execution configuration and that the server is running.",
                    e);
        }
        try {
            if (SchemaCurrency.current(
                    pool,
                    schema + "." + Migrations.HISTORY,
                    List.of(migrationLocation),
                    SchemaDatabase.class.getClassLoader())) {
                // Nothing to apply and nothing to refuse: Flyway is not started. Its failOnMissingLocations is
                // implied: a current schema was found with migrations at the location.
                return new SchemaDatabase(pool, name + " at " + where + " (schema " + schema + ")");
            }
            Flyway.configure(SchemaDatabase.class.getClassLoader())
                    .dataSource(pool)
                    .schemas(schema)
                    .defaultSchema(schema)
                    .createSchemas(true)
                    .locations(migrationLocation)
                    .failOnMissingLocations(true)
                    .loggers("slf4j")
                    .load()
                    .migrate();
            return new SchemaDatabase(pool, name + " at " + where + " (schema " + schema + ")");
        } catch (FlywayException | IllegalStateException e) {
            pool.close();
            throw new ControlDatabaseException(
                    where, "Migrating the " + name + " at " + where + " failed: " + Causes.rootMessage(e), e);
        }
    }

    /** @return the Jdbi over this schema's pool, with the PostgreSQL plugin installed */
    public Jdbi jdbi() {
        return jdbi;
    }

    /** @return where this database lives, safe to print */
    public String description() {
        return description;
    }

    @Override
    public void close() {
        if (!closed.getAndSet(true)) {
            pool.close();
        }
    }

    @Override
    public String toString() {
        return "SchemaDatabase[" + description + "]";
    }
}
