package dev.vigilo.control;

import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Applies the Flyway migrations of every Vigilo module.
 *
 * <p>Each module ships {@code V<n>__<module>_<what>.sql} under {@code db/migration} in its own jar, with version
 * numbers unique across modules; Flyway scans every class-path entry for the location. The configuration tolerates
 * what that implies: gaps in the numbering, a location that no jar provides (a process built without some modules),
 * migrations applied by a process with more modules than this one ({@code *:missing}, {@code *:future}), and a
 * module's migration that is older than one already applied ({@code outOfOrder}). Concurrent migrations from
 * several processes are serialized by Flyway's PostgreSQL advisory lock.
 */
final class Migrations {

    /** Where every module's migrations live. */
    static final String DEFAULT_LOCATION = "classpath:db/migration";

    /** Flyway's schema history table, in the connection's schema. */
    static final String HISTORY = "flyway_schema_history";

    private Migrations() {}

    /**
     * @return the number of migrations applied now (0 if the schema was current)
     * @throws org.flywaydb.core.api.FlywayException if a migration fails or the applied history contradicts it
     */
    static int migrate(DataSource dataSource, List<String> locations) {
        Objects.requireNonNull(dataSource, "dataSource");
        if (SchemaCurrency.current(dataSource, HISTORY, locations, Migrations.class.getClassLoader())) {
            return 0; // nothing to apply and nothing to refuse: Flyway is not started (docs/configuration.md)
        }
        MigrateResult result = Flyway.configure(Migrations.class.getClassLoader())
                .dataSource(dataSource)
                .locations(locations.toArray(String[]::new))
                .failOnMissingLocations(false)
                .outOfOrder(true)
                .ignoreMigrationPatterns("*:missing", "*:future")
                .validateMigrationNaming(true)
                // Through slf4j like the rest of Vigilo; Flyway would otherwise fall back to java.util.logging on
                // stderr
                // whenever no slf4j provider is bound.
                .loggers("slf4j")
                .load()
                .migrate();
        return result.migrationsExecuted;
    }
}
