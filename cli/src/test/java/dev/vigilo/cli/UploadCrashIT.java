package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills {@code vigilo dataset upload} (a real process, SIGKILL) at random points of its run, repeatedly, while a
 * watcher polls the catalog: no partial row is ever visible, every row that appears verifies, and a final re-run
 * completes and verifies.
 */
class UploadCrashIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    @Test
    void killedUploadsLeaveNoPartialRowAndARerunCompletes() throws Exception {
        String dbUrl = TestPostgres.newDatabaseUrl();
        Path file = home.resolve("crash.jsonl");
        long cases = CaseFiles.write(file, 100L << 20, 300);
        List<String> control = List.of("--control-db", dbUrl);

        // Time one uninterrupted upload into a separate home and database, so kill points spread over a whole run.
        long start = System.nanoTime();
        VigiloProcess.Result baseline = VigiloProcess.run(
                home.resolve("baseline"),
                Map.of(),
                List.of(),
                300,
                "--control-db",
                TestPostgres.newDatabaseUrl(),
                "dataset",
                "upload",
                file.toString(),
                "--json");
        long runMillis = (System.nanoTime() - start) / 1_000_000;
        assertThat(baseline.exitCode()).as(baseline.err()).isZero();
        Path dataHome = home.resolve("data");

        // Migrate the catalog schema first so the watcher can poll from the very start.
        dev.vigilo.control.ControlDatabase.open(new dev.vigilo.control.ControlSettings.Jdbc(dbUrl))
                .close();
        AtomicReference<String> watcherFailure = new AtomicReference<>();
        Thread watcher = new Thread(() -> watchCatalog(dbUrl, watcherFailure));
        watcher.setDaemon(true);
        watcher.start();
        Random random = new Random(20261129);
        int killed = 0;
        try {
            for (int attempt = 0; attempt < 6; attempt++) {
                Process p = VigiloProcess.builder(
                                dataHome, Map.of(), List.of(), args(control, "dataset", "upload", file.toString()))
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .redirectError(ProcessBuilder.Redirect.DISCARD)
                        .start();
                long delay = (long) (runMillis * (0.1 + 0.9 * random.nextDouble()));
                if (!p.waitFor(delay, TimeUnit.MILLISECONDS)) {
                    p.destroyForcibly(); // SIGKILL: no shutdown hooks, no cleanup
                    killed++;
                }
                p.waitFor();
                assertCatalogConsistent(dataHome, control);
            }
        } finally {
            watcher.interrupt();
            watcher.join(10_000);
        }
        assertThat(killed).as("at least some runs were killed mid-way").isGreaterThanOrEqualTo(3);
        assertThat(watcherFailure.get()).isNull();

        VigiloProcess.Result rerun = VigiloProcess.run(
                dataHome, Map.of(), List.of(), 300, args(control, "dataset", "upload", file.toString(), "--json"));
        assertThat(rerun.exitCode()).as(rerun.err()).isZero();
        JsonNode entry = JSON.readTree(rerun.out());
        assertThat(entry.get("case_count").asLong()).isEqualTo(cases);
        VigiloProcess.Result verify = VigiloProcess.run(
                dataHome,
                Map.of(),
                List.of(),
                300,
                args(control, "dataset", "verify", entry.get("upload_id").asText()));
        assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
    }

    /** Every visible row is complete and its dataset verifies. */
    private static void assertCatalogConsistent(Path home, List<String> control) throws Exception {
        VigiloProcess.Result list =
                VigiloProcess.run(home, Map.of(), List.of(), 120, args(control, "dataset", "list", "--json"));
        assertThat(list.exitCode()).as(list.err()).isZero();
        for (JsonNode row : JSON.readTree(list.out())) {
            VigiloProcess.Result verify = VigiloProcess.run(
                    home,
                    Map.of(),
                    List.of(),
                    300,
                    args(control, "dataset", "verify", row.get("upload_id").asText()));
            assertThat(verify.exitCode())
                    .as("row %s: %s", row, verify.out() + verify.err())
                    .isZero();
        }
    }

    /** Polls the catalog while uploads run and are killed: a row is either absent or complete. */
    private static void watchCatalog(String dbUrl, AtomicReference<String> failure) {
        try (Connection c = DriverManager.getConnection(dbUrl);
                Statement s = c.createStatement()) {
            while (!Thread.currentThread().isInterrupted()) {
                try (ResultSet rs = s.executeQuery(
                        "SELECT upload_id, case_count, index_root_key, membership_uuid " + "FROM dataset_uploads")) {
                    while (rs.next()) {
                        if (rs.getLong(2) <= 0 || rs.getString(3) == null || rs.getString(4) == null) {
                            failure.compareAndSet(null, "incomplete row " + rs.getString(1));
                        }
                    }
                }
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            failure.compareAndSet(null, "watcher failed: " + e);
        }
    }

    private static String[] args(List<String> leading, String... rest) {
        List<String> all = new ArrayList<>(leading);
        all.addAll(List.of(rest));
        return all.toArray(String[]::new);
    }
}
