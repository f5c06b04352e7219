package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StoreSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The set-up shared by the upload tests of each input format: one catalog on a real PostgreSQL for the class, a fresh
 * local store for each test, an upload as {@code vigilo dataset upload} makes it, the stored cases read back, and the
 * check that a rejected file stored nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class UploadFixture {
    ControlDatabase control;
    DatasetCatalog catalog;
    ObjectStore store;

    @TempDir
    Path dir;

    @BeforeAll
    void openControl() {
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
        catalog = new DatasetCatalog(control.jdbi());
    }

    @AfterAll
    void closeControl() {
        control.close();
    }

    @BeforeEach
    void freshStore() throws IOException {
        store = ObjectStores.open(new StoreSpec.Local("local", Files.createTempDirectory(dir, "objects")));
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    DatasetEntry upload(Path file, Optional<CaseMap> map) {
        return catalog.upload(
                new UploadRequest(file, Optional.empty(), Optional.empty(), map), store, UploadProgress.NONE);
    }

    List<String> storedCases(DatasetEntry entry) {
        List<String> cases = new ArrayList<>();
        DatasetReader.open(entry, store).forEachCase(c -> cases.add(new String(c.caseJson(), StandardCharsets.UTF_8)));
        return cases;
    }

    /**
     * Asserts that uploading {@code file} is refused with {@code message} (and whatever {@code exception} checks of
     * the error), and that neither the catalog nor the store gained anything.
     */
    void rejected(Path file, Optional<CaseMap> map, String message, Consumer<InvalidDatasetException> exception) {
        int before = catalog.list().size();
        int objects = store.list("", Deadline.after(Duration.ofSeconds(30))).size();
        assertThatThrownBy(() -> upload(file, map))
                .isInstanceOf(InvalidDatasetException.class)
                .hasMessageContaining(message)
                .satisfies(e -> exception.accept((InvalidDatasetException) e));
        assertThat(catalog.list()).hasSize(before);
        assertThat(store.list("", Deadline.after(Duration.ofSeconds(30)))).hasSize(objects);
    }
}
