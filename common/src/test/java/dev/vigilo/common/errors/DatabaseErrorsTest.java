package dev.vigilo.common.errors;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.junit.jupiter.api.Test;

/** Which JDBC failures mean "the database is unavailable", and the one line that says so. */
class DatabaseErrorsTest {
    @Test
    void connectionResourceAndShutdownStatesAnywhereInTheChainAreUnavailable() {
        for (String state : new String[] {"08001", "08006", "53300", "57P01", "57P03"}) {
            SQLException driver = new SQLException("the server said no", state);
            assertThat(DatabaseErrors.isUnavailable(driver)).as(state).isTrue();
            assertThat(DatabaseErrors.isUnavailable(new IllegalStateException("wrapped", new RuntimeException(driver))))
                    .as(state + " wrapped")
                    .isTrue();
        }
        // The pool's own timeout carries no SQLSTATE.
        assertThat(DatabaseErrors.isUnavailable(new SQLTransientConnectionException("pool timed out")))
                .isTrue();
    }

    @Test
    void statementErrorsAndOtherFailuresAreNot() {
        assertThat(DatabaseErrors.isUnavailable(new SQLException("syntax error", "42601")))
                .isFalse();
        assertThat(DatabaseErrors.isUnavailable(new SQLException("unique violation", "23505")))
                .isFalse();
        assertThat(DatabaseErrors.isUnavailable(new SQLException("no state"))).isFalse();
        assertThat(DatabaseErrors.isUnavailable(new IllegalStateException("a bug")))
                .isFalse();
        assertThat(DatabaseErrors.unavailable(new SQLException("syntax error", "42601"), "control database", "retry"))
                .isEmpty();
    }

    @Test
    void theMessageIsOneLineOfTheInnermostDriverWordsWithoutClassNamesOrSecrets() {
        SQLException driver = new SQLException(
                "Connection to db:5432 refused for jdbc:postgresql://db/v?user=u&password=hunter2.\n"
                        + "Check that the hostname and port are correct.",
                "08001",
                new ConnectException("Connection refused"));
        RuntimeException jdbi = new RuntimeException(
                "org.jdbi.v3.core.ConnectionException: java.sql.SQLTransientConnectionException: pool",
                new SQLTransientConnectionException("vigilo-control - Connection is not available", driver));
        UnavailableException e = DatabaseErrors.unavailable(jdbi, "control database", "repeat the command")
                .orElseThrow();
        assertThat(e.kind()).isEqualTo(ErrorKind.UNAVAILABLE);
        assertThat(e.getCause()).isSameAs(jdbi);
        assertThat(e.getMessage())
                .startsWith("the control database is unavailable (Connection to db:5432 refused for ")
                .endsWith("); check that it is running, then repeat the command")
                .doesNotContain("\n", "hunter2", "org.", "java.", "Exception", "Check that the hostname");
        assertThat(DatabaseErrors.detail(new IllegalStateException("x"))).isEqualTo("connection lost");
    }
}
