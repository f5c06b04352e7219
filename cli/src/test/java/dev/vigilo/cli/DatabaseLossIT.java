package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PostgreSQL stops while a real {@code vigilo run create} process prepares a plan: the process exits 5 with one line
 * that names the run, says to repeat the command and that the creation lease may refuse a repeat for five minutes;
 * no pool warnings, driver stack traces or SQL text reach stderr (without --verbose).
 */
class DatabaseLossIT {
    @TempDir
    Path home;

    @Test
    void createReportsALostDatabaseInOneLineWithTheLeaseHint() throws Exception {
        EmbeddedPostgres postgres = EmbeddedPostgres.builder().start();
        boolean stopped = false;
        try {
            String db = postgres.getJdbcUrl("postgres", "postgres");
            Path cases = home.resolve("cases.jsonl");
            CaseFiles.write(cases, 60L << 20, 200);
            VigiloProcess.Result up = VigiloProcess.run(
                    home, Map.of(), List.of(), 300, "--control-db", db, "dataset", "upload", cases.toString());
            assertThat(up.exitCode()).as(up.err()).isZero();
            // The control database opens on a thread beside the upload: logging still starts quietly.
            assertThat(up.err()).doesNotContain("SLF4J");
            Path profile = home.resolve("profile.yaml");
            Files.writeString(profile, """
                    name: loss
                    agent: {kind: command, command: ["cat"]}
                    evaluators: [{name: exact, kind: exact_match}]
                    gates: [{name: all, required_evaluators: [exact], min_pass_rate: 0.5}]
                    limits: {max_cases: 10000000}
                    """);
            String runId = UUID.randomUUID().toString();
            Path err = home.resolve("create.err");
            Process p = VigiloProcess.builder(
                            home,
                            Map.of(),
                            List.of(),
                            "--control-db",
                            db,
                            "run",
                            "create",
                            "--profile-file",
                            profile.toString(),
                            "--dataset-upload-id",
                            up.out().trim(),
                            "--run-id",
                            runId)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(err.toFile())
                    .start();
            // Stop the server once preparation holds the lease and has acknowledged a chunk.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            long cursor = 0;
            while (cursor == 0 && System.nanoTime() < deadline && p.isAlive()) {
                try (Connection c = postgres.getPostgresDatabase().getConnection();
                        Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT COALESCE(MAX(plan_chunk_cursor), 0) FROM run_plans")) {
                    rs.next();
                    cursor = rs.getLong(1);
                } catch (java.sql.SQLException notYet) {
                    // the tables appear with the first migration
                }
                Thread.sleep(50);
            }
            assertThat(p.isAlive())
                    .as("preparation still running when the database stops")
                    .isTrue();
            assertThat(cursor).isPositive();
            postgres.close();
            stopped = true;
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
            String stderr = Files.readString(err, StandardCharsets.UTF_8);
            assertThat(p.exitValue()).as(stderr).isEqualTo(ExitCode.UNAVAILABLE);
            assertThat(stderr.lines().count()).as(stderr).isEqualTo(1);
            assertThat(stderr)
                    .startsWith("vigilo: error: run " + runId + ": ")
                    .contains("control database failed", "repeat the command with the same --run-id", "5 minutes")
                    .doesNotContain("\tat ", "Exception", "HikariPool", "SELECT", "INSERT", "UPDATE");
        } finally {
            if (!stopped) {
                postgres.close();
            }
        }
    }
}
