package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.dataset.CaseMap;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetOrigin;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StoreSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code datagen export --to-dataset}: the shipped example pipeline's completed leaves become a finalized dataset in
 * one step, mapped by the user's map, with the experiment recorded as its origin; a map naming a field an item lacks
 * stores nothing and names the item.
 */
class DatasetExportTest {
    @TempDir
    Path dir;

    @Test
    void completedLeavesBecomeCasesWithTheirOrigin() throws Exception {
        PipelineSpec spec = PipelineParser.parse(Path.of("..", "examples", "datagen", "pipeline.yaml"));
        LogRoot root = LogRoot.local(dir.resolve("root"));
        PipelineRunner.run(spec, new PipelineRunner.Options(root, "demo", 2, DatagenProgress.NONE));
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
                ObjectStore store = ObjectStores.open(new StoreSpec.Local("local", dir.resolve("objects")))) {
            DatasetCatalog catalog = new DatasetCatalog(control.jdbi());

            CaseMap bad = CaseMap.parse("id=item_id,input=question,expected=solution", "--map");
            assertThatThrownBy(() -> DatasetExport.toDataset(
                            root, "quiz", "demo", "quiz", bad, Optional.empty(), catalog, store, UploadProgress.NONE))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageStartingWith("experiment \"demo\" of pipeline \"quiz\": record \"")
                    .hasMessageContaining("no field \"solution\" (mapped onto expected)")
                    .hasMessageNotContaining("vigilo-export-");
            assertThat(catalog.list()).isEmpty();
            assertThat(store.list("", Deadline.after(Duration.ofSeconds(30)))).isEmpty();

            CaseMap map = CaseMap.parse("id=item_id,input=question,metadata.rounds=rounds", "--map");
            DatasetEntry entry = DatasetExport.toDataset(
                    root, "quiz", "demo", "quiz-cases", map, Optional.empty(), catalog, store, UploadProgress.NONE);
            assertThat(entry.name()).isEqualTo("quiz-cases");
            assertThat(entry.caseCount()).isEqualTo(6);
            List<String> cases = new ArrayList<>();
            DatasetReader.open(entry, store)
                    .forEachCase(c -> cases.add(new String(c.caseJson(), StandardCharsets.UTF_8)));
            assertThat(cases)
                    .hasSize(6)
                    .allSatisfy(
                            c -> assertThat(c)
                                    .matches(
                                            "\\{\"id\":\"[^\"]+\",\"input\":\"Explain [^\"]*\",\"metadata\":\\{\"rounds\":2\\}\\}"));
            // Sorted by item id, as `datagen export` writes them.
            assertThat(cases).isSorted();

            DatasetOrigin origin = catalog.origin(entry.uploadId()).orElseThrow();
            assertThat(origin.pipeline()).isEqualTo("quiz");
            assertThat(origin.experiment()).isEqualTo("demo");
            assertThat(origin.items()).isEqualTo(6);
            assertThat(origin.durableRoot()).isEqualTo(dir.resolve("root").toString());
            assertThat(origin.map().toString()).isEqualTo("id=item_id,input=question,metadata.rounds=rounds");
            assertThat(catalog.madeFrom("quiz", "demo")).containsExactly(entry);
            assertThat(catalog.madeFrom("quiz", "other")).isEmpty();
        }
    }
}
