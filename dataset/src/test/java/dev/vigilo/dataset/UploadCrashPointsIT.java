package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.crash.CrashSweep;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectInfo;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StoreSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash-point sweep of a dataset upload: a child process uploading a small multi-file dataset is halted at one durable
 * boundary (an object's temporary write, its link into place, the removal of its temporary file, the catalog
 * insert, after the insert); right after the halt the catalog holds the upload completely (its dataset verifies) or
 * not at all; then the same upload (same upload id) is repeated in this JVM and ends with exactly the uninterrupted
 * upload's entry and objects.
 */
class UploadCrashPointsIT {
    static final int LIMIT = 100;
    static final Duration CHILD_TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES) // the exhaustive sweep; the default selection takes a minute
    void anUploadHaltedAtAnyDurableBoundaryIsAbsentOrCompleteAndARepeatFinishesIt() throws Exception {
        String db = TestPostgres.newDatabaseUrl();
        Path file = cases();
        CrashSweep sweep = new CrashSweep(UploadMain.class.getName(), List.of(), dir.resolve("children"));
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(db))) {
            DatasetCatalog catalog = new DatasetCatalog(control.jdbi());
            UUID cleanId = UUID.randomUUID();
            Path cleanStore = dir.resolve("clean");
            List<String> boundaries =
                    sweep.trace(CHILD_TIMEOUT, db, cleanStore.toString(), file.toString(), cleanId.toString());
            System.out.println("upload boundaries: " + countByName(boundaries));
            DatasetEntry clean = catalog.get(cleanId);
            List<String> cleanObjects = objects(cleanStore);

            CrashSweep.Selection selection = CrashSweep.select(boundaries.size(), LIMIT);
            Map<Integer, UUID> ids = new LinkedHashMap<>();
            for (int point : selection.points()) {
                ids.put(point, UUID.randomUUID());
            }
            List<String> committedBeforeTheHalt = new ArrayList<>();
            CrashSweep.forEach(
                    selection,
                    CrashSweep.parallelism(),
                    point -> sweep.haltAt(
                            point,
                            CHILD_TIMEOUT,
                            db,
                            store(point).toString(),
                            file.toString(),
                            ids.get(point).toString()),
                    (point, halted) -> {
                        String where = "boundary " + point + " (" + boundaries.get(point - 1) + "), " + selection;
                        assertThat(halted.halted())
                                .as(where + ": " + halted.err())
                                .isTrue();
                        try (ObjectStore store = ObjectStores.open(new StoreSpec.Local("local", store(point)))) {
                            Optional<DatasetEntry> left = catalog.find(ids.get(point));
                            if (left.isPresent()) {
                                committedBeforeTheHalt.add(boundaries.get(point - 1));
                                assertThat(DatasetReader.open(left.get(), store)
                                                .verify()
                                                .caseCount())
                                        .as(where)
                                        .isEqualTo(clean.caseCount());
                            }
                            DatasetEntry done = catalog.upload(
                                    new UploadRequest(file, Optional.of("crash"), Optional.of(ids.get(point))),
                                    store,
                                    UploadProgress.NONE);
                            assertThat(DatasetReader.open(done, store).verify().caseCount())
                                    .as(where)
                                    .isEqualTo(clean.caseCount());
                            assertThat(sameDataset(done)).as(where).isEqualTo(sameDataset(clean));
                            assertThat(objects(store(point))).as(where).isEqualTo(cleanObjects);
                        }
                    });
            System.out.println("upload crash sweep: " + selection.points().size() + " halts of " + boundaries.size()
                    + " boundaries; catalog row present right after the halt at: " + committedBeforeTheHalt);
            assertThat(committedBeforeTheHalt)
                    .as("only a halt after the insert leaves a row")
                    .containsOnly("dataset.catalog-insert.done");
        }
    }

    private Path store(int point) {
        return dir.resolve("store-" + point);
    }

    /** A dataset of four case files (about 1 MiB of cases each) and a one-document index. */
    private Path cases() throws Exception {
        StringBuilder b = new StringBuilder();
        String padding = "x".repeat(200_000);
        for (int i = 0; i < 18; i++) {
            b.append("{\"id\":\"case-")
                    .append(i)
                    .append("\",\"input\":\"")
                    .append(padding)
                    .append(i)
                    .append("\",\"expected\":\"e")
                    .append(i)
                    .append("\"}\n");
        }
        return Files.writeString(dir.resolve("cases.jsonl"), b);
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

    private static List<String> objects(Path root) {
        try (ObjectStore store = ObjectStores.open(new StoreSpec.Local("local", root))) {
            return store.list("", Deadline.after(Duration.ofSeconds(30))).stream()
                    .map(ObjectInfo::key)
                    .map(Object::toString)
                    .sorted()
                    .toList();
        }
    }

    private static Map<String, Integer> countByName(List<String> names) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        names.forEach(n -> counts.merge(n, 1, Integer::sum));
        return counts;
    }
}
