package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.crash.CrashSweep;
import dev.vigilo.common.crash.RandomKills;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectInfo;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills {@code vigilo dataset upload} (a real process, SIGKILL) at random moments of its work (after it opened the
 * source file, within the duration of an uninterrupted upload), in two independent sequences at a time, each with a
 * Vigilo home and catalog of its own, while a watcher polls the catalogs: no partial row is ever visible, after every
 * kill every row verifies, a killed upload is repeated under the same upload id (or given up for a new one), and each
 * sequence ends with an upload that completes with the uninterrupted upload's dataset and objects and verifies.
 *
 * <p>{@value RandomKills#POINTS}{@code =N} makes N kills; the seed is printed.
 */
class UploadCrashIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int DEFAULT_KILLS = 20;
    private static final int LANES = 2;
    private static final long FILE_BYTES = 16L << 20;
    private static final Duration CHILD_TIMEOUT = Duration.ofMinutes(5);

    @TempDir
    Path home;

    private Path file;
    private DatasetEntry baseline;
    private List<String> baselineObjects;

    /** How an uninterrupted upload spends its time. */
    private record Timing(long startupMillis, long workMillis) {}

    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES) // -Dvigilo.kill.points=N runs longer
    void killedUploadsLeaveNoPartialRowAndARerunCompletes() throws Exception {
        RandomKills kills = RandomKills.configure("cli UploadCrashIT", DEFAULT_KILLS);
        if (!RandomKills.canSeeOpenFiles()) {
            System.out.println("UploadCrashIT: no /proc/PID/fd here, so a kill's moment counts from the measured"
                    + " start-up rather than from the source file's opening");
        }
        file = home.resolve("crash.jsonl");
        long cases = CaseFiles.write(file, FILE_BYTES, 300);

        // One uninterrupted upload into a home and database of its own: the reference, and the duration of its work.
        Timing timing = uploadUninterrupted(cases);
        System.out.println("uninterrupted upload: work started " + timing.startupMillis() + " ms after the start,"
                + " ended " + timing.workMillis() + " ms later");

        List<String> urls = new CopyOnWriteArrayList<>();
        for (int lane = 0; lane < LANES; lane++) {
            urls.add(TestPostgres.newDatabaseUrl());
            // Migrate the catalog schema first so the watcher can poll from the very start.
            ControlDatabase.open(new ControlSettings.Jdbc(urls.get(lane))).close();
        }
        AtomicReference<String> watcherFailure = new AtomicReference<>();
        Thread watcher = new Thread(() -> watchCatalogs(urls, watcherFailure));
        watcher.setDaemon(true);
        watcher.start();
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        try {
            RandomKills.lanes(
                    LANES,
                    LANES,
                    lane -> lane(lane, kills.share(lane, LANES), kills.random(lane), urls.get(lane), timing, log));
        } finally {
            watcher.interrupt();
            watcher.join(10_000);
        }
        System.out.println(kills + ":\n  " + String.join("\n  ", log));
        assertThat(log.stream().filter(l -> l.contains(" killed ")).count())
                .as("%s: %s", kills, log)
                .isEqualTo(kills.points());
        assertThat(watcherFailure.get()).isNull();
    }

    /**
     * One sequence of kills on its own home and catalog: uploads killed at random moments of their work, each
     * followed by a check of the catalog; a killed upload is repeated under its upload id, or (one time in three)
     * given up for a new id; the last is repeated to the end.
     */
    private void lane(int lane, int target, Random random, String db, Timing timing, List<String> log)
            throws Exception {
        Path dataHome = home.resolve("lane-" + lane);
        List<String> control = List.of("--control-db", db);
        UUID upload = UUID.randomUUID();
        int killed = 0;
        for (int attempt = 0; killed < target; attempt++) {
            assertThat(attempt).as("attempts of lane %d: %s", lane, log).isLessThan(target * 4);
            String where = "lane " + lane + " attempt " + attempt + " upload " + upload;
            long start = System.nanoTime();
            Process p = VigiloProcess.builder(
                            dataHome,
                            Map.of(),
                            CrashSweep.FAST_START,
                            args(control, "dataset", "upload", file.toString(), "--upload-id", upload.toString()))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            awaitWork(p, start, timing, where);
            long delay = RandomKills.delayWithin(random, timing.workMillis());
            if (RandomKills.killAfter(p, delay)) {
                killed++;
                log.add(where + " killed " + delay + " ms into its work, " + objectFiles(dataHome)
                        + " files in the store");
                assertCatalogConsistent(dataHome, db, where);
                if (random.nextInt(3) == 0) {
                    upload = UUID.randomUUID();
                }
            } else {
                assertThat(p.exitValue()).as(where).isZero();
                log.add(where + " completed before its kill at " + delay + " ms");
                assertSameAsBaseline(dataHome, db, upload, where);
                upload = UUID.randomUUID();
            }
        }

        VigiloProcess.Result rerun = VigiloProcess.run(
                dataHome,
                Map.of(),
                CrashSweep.FAST_START,
                300,
                args(control, "dataset", "upload", file.toString(), "--upload-id", upload.toString(), "--json"));
        assertThat(rerun.exitCode()).as(rerun.err()).isZero();
        JsonNode entry = JSON.readTree(rerun.out());
        assertThat(entry.get("case_count").asLong()).isEqualTo(baseline.caseCount());
        assertSameAsBaseline(dataHome, db, upload, "lane " + lane + " repeated upload " + upload);
        VigiloProcess.Result verify = VigiloProcess.run(
                dataHome,
                Map.of(),
                CrashSweep.FAST_START,
                300,
                args(control, "dataset", "verify", entry.get("upload_id").asText()));
        assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
        log.add("lane " + lane + " upload " + upload + " repeated to the end and verified");
    }

    /** Waits until the upload has opened its source file (its work started); without /proc, its measured start-up. */
    private void awaitWork(Process p, long start, Timing timing, String where) throws InterruptedException {
        if (RandomKills.canSeeOpenFiles()) {
            boolean working = RandomKills.awaitWhileAlive(
                    p, CHILD_TIMEOUT, where + " to open its source", () -> RandomKills.hasOpen(p, file));
            assertThat(working).as(where + " ended before opening its source").isTrue();
        } else {
            Thread.sleep(Math.max(0, timing.startupMillis() - RandomKills.millisSince(start)));
        }
    }

    private Timing uploadUninterrupted(long cases) throws Exception {
        String db = TestPostgres.newDatabaseUrl();
        Path baselineHome = home.resolve("baseline");
        long start = System.nanoTime();
        Process p = VigiloProcess.builder(
                        baselineHome,
                        Map.of(),
                        CrashSweep.FAST_START,
                        "--control-db",
                        db,
                        "dataset",
                        "upload",
                        file.toString(),
                        "--json")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        long started = start;
        if (RandomKills.canSeeOpenFiles()) {
            assertThat(RandomKills.awaitWhileAlive(
                            p, CHILD_TIMEOUT, "the source to be opened", () -> RandomKills.hasOpen(p, file)))
                    .isTrue();
            started = System.nanoTime();
        }
        assertThat(p.waitFor(CHILD_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(db))) {
            List<DatasetEntry> entries = new DatasetCatalog(control.jdbi()).list();
            assertThat(entries).hasSize(1);
            baseline = entries.get(0);
        }
        assertThat(baseline.caseCount()).isEqualTo(cases);
        baselineObjects = objects(baselineHome);
        return new Timing((started - start) / 1_000_000, RandomKills.millisSince(started));
    }

    /** Every visible row is complete and its dataset verifies. */
    private static void assertCatalogConsistent(Path dataHome, String db, String where) {
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(db));
                ObjectStore store = store(dataHome)) {
            for (DatasetEntry row : new DatasetCatalog(control.jdbi()).list()) {
                assertThat(DatasetReader.open(row, store).verify().caseCount())
                        .as("%s: row %s", where, row)
                        .isEqualTo(row.caseCount());
            }
        }
    }

    /** The upload's entry is the uninterrupted upload's dataset, and the store holds the same objects. */
    private void assertSameAsBaseline(Path dataHome, String db, UUID upload, String where) {
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(db));
                ObjectStore store = store(dataHome)) {
            Optional<DatasetEntry> entry = new DatasetCatalog(control.jdbi()).find(upload);
            assertThat(entry).as(where).isPresent();
            assertThat(sameDataset(entry.get())).as(where).isEqualTo(sameDataset(baseline));
            assertThat(DatasetReader.open(entry.get(), store).verify().caseCount())
                    .as(where)
                    .isEqualTo(baseline.caseCount());
        }
        assertThat(objects(dataHome)).as(where).isEqualTo(baselineObjects);
    }

    /** What identifies the stored dataset, without the upload id, the store binding and the time. */
    private static List<Object> sameDataset(DatasetEntry e) {
        return List.of(
                e.name(),
                e.sourceSha256(),
                e.sourceBytes(),
                e.membershipUuid(),
                e.caseCount(),
                e.indexRoot(),
                e.indexLevels());
    }

    private static ObjectStore store(Path dataHome) {
        return ObjectStores.open(
                StorageConfig.localDefault(dataHome.resolve("objects")).defaultStore());
    }

    private static List<String> objects(Path dataHome) {
        try (ObjectStore store = store(dataHome)) {
            return store.list("", Deadline.after(Duration.ofSeconds(30))).stream()
                    .map(ObjectInfo::key)
                    .map(Object::toString)
                    .sorted()
                    .toList();
        }
    }

    private static int objectFiles(Path dataHome) {
        return java.nio.file.Files.isDirectory(dataHome.resolve("objects"))
                ? objects(dataHome).size()
                : 0;
    }

    /** Polls the catalogs while uploads run and are killed: a row is either absent or complete. */
    private static void watchCatalogs(List<String> urls, AtomicReference<String> failure) {
        List<Connection> connections = new ArrayList<>();
        try {
            for (String url : urls) {
                connections.add(DriverManager.getConnection(url));
            }
            while (!Thread.currentThread().isInterrupted()) {
                for (Connection c : connections) {
                    try (Statement s = c.createStatement();
                            ResultSet rs = s.executeQuery("SELECT upload_id, case_count, index_root_key,"
                                    + " membership_uuid FROM dataset_uploads")) {
                        while (rs.next()) {
                            if (rs.getLong(2) <= 0 || rs.getString(3) == null || rs.getString(4) == null) {
                                failure.compareAndSet(null, "incomplete row " + rs.getString(1));
                            }
                        }
                    }
                }
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            failure.compareAndSet(null, "watcher failed: " + e);
        } finally {
            for (Connection c : connections) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // closing after the test
                }
            }
        }
    }

    private static String[] args(List<String> leading, String... rest) {
        List<String> all = new ArrayList<>(leading);
        all.addAll(List.of(rest));
        return all.toArray(String[]::new);
    }
}
