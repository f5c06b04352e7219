package dev.vigilo.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.vigilo.common.errors.InvalidInputException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link ControlDatabase} on an existing server (a fresh database of {@link TestPostgres} per test). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ControlDatabaseJdbcTest {

    private static final String OK = "classpath:dev/vigilo/control/migrations/ok";
    private static final String LATE = "classpath:dev/vigilo/control/migrations/late";
    private static final String BROKEN = "classpath:dev/vigilo/control/migrations/broken";
    private static final String SLOW = "classpath:dev/vigilo/control/migrations/slow";
    private static final EmbeddedOptions NO_EMBEDDED = new EmbeddedOptions(Duration.ZERO, Duration.ofSeconds(1));

    private static ControlDatabase open(String url, String... locations) {
        return ControlDatabase.open(new ControlSettings.Jdbc(url), List.of(locations), NO_EMBEDDED);
    }

    private static <T> T scalar(ControlDatabase database, String sql, Class<T> type) {
        return database.jdbi().withHandle(h -> h.createQuery(sql).mapTo(type).one());
    }

    private static String appliedVersions(ControlDatabase database) {
        return scalar(
                database,
                "SELECT string_agg(version, ',' ORDER BY installed_rank)" + " FROM flyway_schema_history WHERE success",
                String.class);
    }

    @Test
    void migratesAndServesJdbi() {
        try (ControlDatabase database = open(TestPostgres.newDatabaseUrl(), OK)) {
            database.jdbi()
                    .useHandle(h ->
                            h.execute("INSERT INTO test_items (name, tags) VALUES (?, ?::jsonb)", "a", "{\"k\": 1}"));
            String tags = scalar(database, "SELECT tags::text FROM test_items WHERE name = 'a'", String.class);
            assertThat(tags).isEqualTo("{\"k\": 1}");
            assertThat(appliedVersions(database)).isEqualTo("1,3");
            assertThat(database.description()).startsWith("PostgreSQL 17.").contains("jdbc:postgresql://localhost:");
        }
    }

    @Test
    void reopeningAppliesOnlyWhatIsNewEvenWhenOlderThanTheCurrentVersion() {
        String url = TestPostgres.newDatabaseUrl();
        open(url, OK).close();
        // V2 arrives after V1 and V3 were applied, as when a module is added to an existing installation.
        try (ControlDatabase database = open(url, OK, LATE)) {
            assertThat(appliedVersions(database)).isEqualTo("1,3,2");
        }
        // ...and a process that lacks that module still opens the database.
        open(url, OK).close();
    }

    @Test
    void defaultLocationWithNoMigrationsOpens() {
        try (ControlDatabase database = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()))) {
            assertThat(scalar(database, "SELECT 1", Integer.class)).isEqualTo(1);
        }
    }

    @Test
    void concurrentOpensMigrateOnce() throws Exception {
        String url = TestPostgres.newDatabaseUrl();
        int openers = 3;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService executor = Executors.newFixedThreadPool(openers);
        try {
            List<Future<ControlDatabase>> futures = new ArrayList<>();
            for (int i = 0; i < openers; i++) {
                Callable<ControlDatabase> opener = () -> {
                    start.await();
                    return open(url, SLOW);
                };
                futures.add(executor.submit(opener));
            }
            start.countDown();
            List<ControlDatabase> databases = new ArrayList<>();
            for (Future<ControlDatabase> future : futures) {
                databases.add(future.get(30, TimeUnit.SECONDS));
            }
            assertThat(scalar(databases.get(0), "SELECT count(*) FROM test_slow", Integer.class))
                    .isEqualTo(1);
            assertThat(scalar(
                            databases.get(0),
                            "SELECT count(*) FROM flyway_schema_history WHERE version = '1'",
                            Integer.class))
                    .isEqualTo(1);
            databases.forEach(ControlDatabase::close);
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void failedMigrationIsReportedAndRolledBack() {
        String url = TestPostgres.newDatabaseUrl();
        assertThatThrownBy(() -> open(url, BROKEN))
                .isInstanceOf(ControlDatabaseException.class)
                .hasMessageContaining("Migrating the control database at jdbc:postgresql://localhost:")
                .hasMessageContaining("V1__control_test_broken.sql")
                .hasMessageContaining("no_such_column")
                .satisfies(e ->
                        assertThat(((ControlDatabaseException) e).target()).startsWith("jdbc:postgresql://localhost:"));
        // PostgreSQL has transactional DDL: the half-applied script left nothing behind.
        try (ControlDatabase database = open(url)) {
            assertThat(scalar(database, "SELECT to_regclass('test_broken') IS NULL", Boolean.class))
                    .isTrue();
        }
    }

    @Test
    void unreachableServerFailsFastWithAdvice() {
        long started = System.nanoTime();
        assertThatThrownBy(() -> open("jdbc:postgresql://127.0.0.1:1/vigilo?user=v&password=hunter2", OK))
                .isInstanceOf(ControlDatabaseException.class)
                .hasMessageContaining(
                        "Cannot connect to the control database at jdbc:postgresql://127.0.0.1:1/vigilo?user=v&password=***")
                .hasMessageContaining("--control-db / VIGILO_CONTROL_DB")
                .hasMessageNotContaining("hunter2");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void unknownDatabaseIsReported() {
        String url = TestPostgres.newDatabaseUrl().replaceFirst("/test_[0-9a-f]+\\?", "/no_such_db?");
        assertThatThrownBy(() -> open(url, OK))
                .isInstanceOf(ControlDatabaseException.class)
                .hasMessageContaining("no_such_db")
                .hasMessageContaining("does not exist");
    }

    @Test
    void descriptionAndToStringHideThePassword() {
        // The test server trusts every local connection, so any password is accepted.
        String url = TestPostgres.newDatabaseUrl() + "&password=hunter2";
        try (ControlDatabase database = open(url)) {
            assertThat(database.description()).contains("password=***").doesNotContain("hunter2");
            assertThat(database.toString()).doesNotContain("hunter2");
        }
        assertThat(new ControlSettings.Jdbc(url).toString()).doesNotContain("hunter2");
    }

    @Test
    void rejectsUrlsThatAreNotPostgresJdbcUrls() {
        assertThatThrownBy(() -> new ControlSettings.Jdbc("postgresql://db/vigilo?password=hunter2"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("jdbc:postgresql:")
                .hasMessageContaining("VIGILO_CONTROL_DB")
                .hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> new ControlSettings.Jdbc("mysql://u:S3cretPW@h/db"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("mysql://u:***@h/db")
                .hasMessageNotContaining("S3cretPW");
        // pgjdbc has no user:password@host syntax: refused before connecting, the password shown nowhere.
        assertThatThrownBy(() -> new ControlSettings.Jdbc("jdbc:postgresql://u:Pw1234@127.0.0.1:1/v"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("is malformed: expected jdbc:postgresql://HOST[:PORT]/DATABASE")
                .hasMessageNotContaining("Pw1234");
        assertThatThrownBy(() -> new ControlSettings.Jdbc("jdbc:postgresql://h:notaport/v"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("is malformed");
        assertThatThrownBy(() -> new ControlSettings.Jdbc(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void malformedHostsAreInvalidInputNotAnUnreachableServer() {
        // Before, these passed the driver's parser and failed only when connecting: exit 5, "is the server running?".
        for (String host : new String[] {
            "[::1", "[::1]]", "[zz::1]", "[1:2:3]", "::1", "[]", "host name", "ho$t", "a,[::1", "[::1]x"
        }) {
            assertThatThrownBy(() -> new ControlSettings.Jdbc("jdbc:postgresql://" + host + "/v?password=Pw1234"))
                    .as(host)
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("malformed host")
                    .hasMessageContaining("[::1]")
                    .hasMessageContaining("VIGILO_CONTROL_DB")
                    .hasMessageNotContaining("Pw1234");
        }
        // The host as written, not what the driver made of it ("[:").
        assertThatThrownBy(() -> new ControlSettings.Jdbc("jdbc:postgresql://[::1/v"))
                .hasMessageContaining("has a malformed host \"[::1\"");
        for (String url : new String[] {
            "jdbc:postgresql://[::1]:5432/v",
            "jdbc:postgresql://[::1]/v",
            "jdbc:postgresql://[fe80::1%25eth0]/v",
            "jdbc:postgresql://127.0.0.1/v",
            "jdbc:postgresql://db.example-1_x:5433/v",
            "jdbc:postgresql://a,b:5433/v",
            "jdbc:postgresql://[::1],db:5433/v",
            "jdbc:postgresql:v",
            "jdbc:postgresql:///v"
        }) {
            assertThat(new ControlSettings.Jdbc(url).url()).isEqualTo(url);
        }
    }

    @Test
    void poolIsSmallAndCloseIsIdempotent() throws Exception {
        ControlDatabase database = open(TestPostgres.newDatabaseUrl());
        assertThat(((HikariDataSource) database.dataSource()).getMaximumPoolSize())
                .isEqualTo(Pools.MAX_POOL_SIZE);
        List<Connection> held = new ArrayList<>();
        try {
            for (int i = 0; i < Pools.MAX_POOL_SIZE; i++) {
                held.add(database.dataSource().getConnection());
            }
            try (Statement statement = held.get(0).createStatement();
                    ResultSet rows = statement.executeQuery("SELECT count(*) FROM pg_stat_activity"
                            + " WHERE application_name = 'vigilo' AND datname = current_database()")) {
                rows.next();
                assertThat(rows.getInt(1)).isEqualTo(Pools.MAX_POOL_SIZE);
            }
        } finally {
            for (Connection connection : held) {
                connection.close();
            }
        }
        database.close();
        database.close();
        assertThatThrownBy(() -> database.dataSource().getConnection()).isInstanceOf(SQLException.class);
    }
}
