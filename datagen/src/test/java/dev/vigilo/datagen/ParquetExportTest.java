package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.dataset.CaseMap;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StoreSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code datagen export --format parquet}: the example pipeline's completed leaves as a Parquet file that an
 * independent reader (DuckDB) reads with the columns typed from the field kinds and the values of the JSON lines
 * export; uploaded with a map it is the dataset {@code --to-dataset} makes with the same map.
 */
class ParquetExportTest {
    @TempDir
    Path dir;

    @Test
    void floatsBooleansAndJsonValuesHaveTheirTypes() throws Exception {
        Files.writeString(dir.resolve("seeds.jsonl"), "{\"id\": \"a\", \"n\": 1}\n{\"id\": \"b\", \"n\": \"two\"}\n");
        Files.writeString(
                dir.resolve("p.yaml"),
                "name: typed\ninput: seeds.jsonl\nid_field: id\nsteps:\n  - name: emit\n    kind: command\n"
                        + "    command: |\n      cat > /dev/null\n"
                        + "      echo '{\"score\": 1.5, \"ok\": true, \"meta\": {\"a\": [1, 2]}}'\n");
        PipelineSpec spec = PipelineParser.parse(dir.resolve("p.yaml"));
        LogRoot root = LogRoot.local(dir.resolve("root"));
        PipelineRunner.run(spec, new PipelineRunner.Options(root, "t", 1, DatagenProgress.NONE));
        Path parquet = dir.resolve("typed.parquet");
        assertThat(DatasetExport.toParquet(root, "typed", "t", parquet, false)).isEqualTo(2);
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
                Statement s = c.createStatement()) {
            Map<String, String> types = new LinkedHashMap<>();
            try (ResultSet r = s.executeQuery("DESCRIBE SELECT * FROM '" + parquet + "'")) {
                while (r.next()) {
                    types.put(r.getString("column_name"), r.getString("column_type"));
                }
            }
            // n is an int in one item and text in the other: JSON holding each value.
            assertThat(types)
                    .containsExactly(
                            Map.entry("item_id", "VARCHAR"),
                            Map.entry("id", "VARCHAR"),
                            Map.entry("meta", "JSON"),
                            Map.entry("n", "JSON"),
                            Map.entry("ok", "BOOLEAN"),
                            Map.entry("score", "DOUBLE"));
            try (ResultSet r = s.executeQuery("SELECT item_id, meta->'a'->>1 AS a1, n::VARCHAR AS n, ok, score FROM '"
                    + parquet + "' ORDER BY item_id")) {
                assertThat(r.next()).isTrue();
                assertThat(r.getString("item_id")).isEqualTo("a");
                assertThat(r.getString("a1")).isEqualTo("2");
                assertThat(r.getString("n")).isEqualTo("1");
                assertThat(r.getBoolean("ok")).isTrue();
                assertThat(r.getDouble("score")).isEqualTo(1.5);
                assertThat(r.next()).isTrue();
                assertThat(r.getString("n")).isEqualTo("\"two\"");
                assertThat(r.next()).isFalse();
            }
        }
    }

    @Test
    void theExportIsATypedParquetFileThatDuckDbReads() throws Exception {
        PipelineSpec spec = PipelineParser.parse(Path.of("..", "examples", "datagen", "pipeline.yaml"));
        LogRoot root = LogRoot.local(dir.resolve("root"));
        PipelineRunner.run(spec, new PipelineRunner.Options(root, "demo", 2, DatagenProgress.NONE));
        Path parquet = dir.resolve("quiz.parquet");
        Path jsonl = dir.resolve("quiz.jsonl");
        assertThat(DatasetExport.toParquet(root, "quiz", "demo", parquet, false))
                .isEqualTo(6);
        assertThat(Experiments.export(root, "quiz", "demo", jsonl)).isEqualTo(6);

        Map<String, String> types = new LinkedHashMap<>();
        List<Map<String, Object>> rows = new ArrayList<>();
        String kv;
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
                Statement s = c.createStatement()) {
            try (ResultSet r = s.executeQuery("DESCRIBE SELECT * FROM '" + parquet + "'")) {
                while (r.next()) {
                    types.put(r.getString("column_name"), r.getString("column_type"));
                }
            }
            try (ResultSet r = s.executeQuery("SELECT * FROM '" + parquet + "' ORDER BY item_id")) {
                while (r.next()) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    for (String column : types.keySet()) {
                        row.put(column, r.getObject(column));
                    }
                    rows.add(row);
                }
            }
            try (ResultSet r = s.executeQuery("SELECT decode(value) AS v FROM parquet_kv_metadata('" + parquet
                    + "') WHERE decode(key) = 'vigilo.export.version'")) {
                assertThat(r.next()).isTrue();
                kv = r.getString("v");
            }
        }
        // item_id first, then the fields by name, each typed by its kind (text, integers, JSON for lists).
        assertThat(types)
                .containsEntry("item_id", "VARCHAR")
                .containsEntry("question", "VARCHAR")
                .containsEntry("answer", "VARCHAR")
                .containsEntry("difficulty", "BIGINT")
                .containsEntry("hardness", "BIGINT")
                .containsEntry("rounds", "BIGINT")
                .containsEntry("variant", "VARCHAR");
        assertThat(types.keySet()).first().isEqualTo("item_id");
        assertThat(kv).isEqualTo("1");

        // The values are those of the JSON lines export, row for row.
        List<String> lines = Files.readAllLines(jsonl);
        assertThat(rows).hasSize(lines.size());
        for (int i = 0; i < lines.size(); i++) {
            JsonNode line = Json.parse(lines.get(i));
            Map<String, Object> row = rows.get(i);
            assertThat(row.get("item_id")).isEqualTo(line.get("id").asText());
            JsonNode input = line.get("input");
            for (String column : types.keySet()) {
                if (column.equals("item_id")) {
                    continue;
                }
                JsonNode expected = input.get(column);
                Object actual = row.get(column);
                if (expected == null) {
                    assertThat(actual).as("%s of %s", column, row).isNull();
                } else if (expected.isIntegralNumber()) {
                    assertThat(actual).as(column).isEqualTo(expected.longValue());
                } else if (expected.isTextual()) {
                    assertThat(actual).as(column).isEqualTo(expected.asText());
                } else {
                    assertThat(Json.parse(actual.toString())).as(column).isEqualTo(expected);
                }
            }
        }

        // An existing --out is kept unless replace is asked for.
        assertThatThrownBy(() -> DatasetExport.toParquet(root, "quiz", "demo", parquet, false))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("already exists");
        assertThat(DatasetExport.toParquet(root, "quiz", "demo", parquet, true)).isEqualTo(6);

        // Uploaded with a map, the file is the dataset --to-dataset makes with that map (same cases, same order).
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
                ObjectStore store = ObjectStores.open(new StoreSpec.Local("local", dir.resolve("objects")))) {
            DatasetCatalog catalog = new DatasetCatalog(control.jdbi());
            CaseMap map = CaseMap.parse(
                    "id=item_id,input=question,expected=answer,metadata.rounds=rounds,metadata.hardness=hardness",
                    "--map");
            DatasetEntry made = DatasetExport.toDataset(
                    root, "quiz", "demo", "quiz", map, Optional.empty(), catalog, store, UploadProgress.NONE);
            DatasetEntry uploaded = catalog.upload(
                    new UploadRequest(parquet, Optional.of("quiz"), Optional.empty(), Optional.of(map)),
                    store,
                    UploadProgress.NONE);
            assertThat(uploaded.caseCount()).isEqualTo(6);
            assertThat(uploaded.membershipUuid()).isEqualTo(made.membershipUuid());
        }
    }
}
