package dev.vigilo.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link SchemaCurrency}: Flyway is skipped only on a schema holding exactly the class path's migrations with
 * Flyway's own checksums; a schema that is behind is still migrated, and a changed migration is still refused.
 */
class SchemaCurrencyTest {
    private static final String OK = "classpath:dev/vigilo/control/migrations/ok";
    private static final String LATE = "classpath:dev/vigilo/control/migrations/late";
    private static final EmbeddedOptions NO_EMBEDDED = new EmbeddedOptions(Duration.ZERO, Duration.ofSeconds(1));
    private static final ClassLoader LOADER = SchemaCurrencyTest.class.getClassLoader();

    private static ControlDatabase open(String url, String... locations) {
        return ControlDatabase.open(new ControlSettings.Jdbc(url), List.of(locations), NO_EMBEDDED);
    }

    private static boolean current(HikariDataSource pool, String table, String... locations) {
        return SchemaCurrency.current(pool, table, List.of(locations), LOADER);
    }

    @Test
    void aMigratedSchemaIsCurrentAndOneBehindIsMigrated() {
        String url = TestPostgres.newDatabaseUrl();
        try (HikariDataSource pool = Pools.create(url)) {
            assertThat(current(pool, Migrations.HISTORY, OK))
                    .as("no history yet")
                    .isFalse();
            open(url, OK).close();
            // Flyway's checksums agree with ours: the schema it just migrated is current.
            assertThat(current(pool, Migrations.HISTORY, OK)).isTrue();
            // A module's migration arrives: behind, so Flyway runs and applies it.
            assertThat(current(pool, Migrations.HISTORY, OK, LATE)).isFalse();
            try (ControlDatabase db = open(url, OK, LATE)) {
                assertThat(count(db.jdbi(), "SELECT count(*) FROM flyway_schema_history"))
                        .isEqualTo(3);
            }
            assertThat(current(pool, Migrations.HISTORY, OK, LATE)).isTrue();
            // A process without that module sees a history it does not know all of: Flyway decides (tolerates it).
            assertThat(current(pool, Migrations.HISTORY, OK)).isFalse();
            open(url, OK).close();
        }
    }

    @Test
    void aChangedOrFailedMigrationIsLeftToFlywayWhichRefusesIt() {
        String url = TestPostgres.newDatabaseUrl();
        open(url, OK).close();
        try (HikariDataSource pool = Pools.create(url)) {
            assertThat(current(pool, Migrations.HISTORY, OK)).isTrue();
            execute(pool, "UPDATE flyway_schema_history SET checksum = checksum + 1 WHERE version = '3'");
            assertThat(current(pool, Migrations.HISTORY, OK)).isFalse();
            assertThatThrownBy(() -> open(url, OK))
                    .isInstanceOf(ControlDatabaseException.class)
                    .hasMessageContaining("checksum");
            execute(
                    pool,
                    "UPDATE flyway_schema_history SET checksum = checksum - 1, success = false WHERE version = '3'");
            assertThat(current(pool, Migrations.HISTORY, OK)).isFalse();
        }
    }

    @Test
    void anExecutionSchemaIsCheckedInItsOwnHistory() {
        String url = TestPostgres.newDatabaseUrl();
        try (ControlDatabase control = open(url);
                HikariDataSource pool = Pools.create(url)) {
            String table = "exec_test." + Migrations.HISTORY;
            assertThat(current(pool, table, OK)).isFalse();
            control.openSchema("test schema", "exec_test", OK, 2).close();
            assertThat(current(pool, table, OK)).isTrue();
            // Opening it again skips Flyway and still serves the schema.
            try (SchemaDatabase again = control.openSchema("test schema", "exec_test", OK, 2)) {
                assertThat(count(again.jdbi(), "SELECT count(*) FROM test_items"))
                        .isZero();
            }
        }
    }

    private static int count(org.jdbi.v3.core.Jdbi jdbi, String sql) {
        return jdbi.withHandle(h -> h.createQuery(sql).mapTo(Integer.class).one());
    }

    private static void execute(HikariDataSource pool, String sql) {
        try (var c = pool.getConnection();
                var s = c.createStatement()) {
            s.execute(sql);
        } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
        }
    }
}
