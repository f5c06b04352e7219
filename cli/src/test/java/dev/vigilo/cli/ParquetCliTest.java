package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parquet both ways on the command line: {@code datagen export --format parquet} of the bundled example read back by
 * DuckDB, then {@code dataset upload} of that file with {@code --map} giving the dataset {@code --to-dataset} gives;
 * a directory of DuckDB-written shards uploaded as one dataset; bad input in one line with its exit code.
 */
class ParquetCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    @Test
    void exportAsParquetAndUploadParquet() throws Exception {
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        Path pipeline = Path.of("..", "examples", "datagen", "pipeline.yaml")
                .toAbsolutePath()
                .normalize();
        Path root = home.resolve("durable");
        CliRunner.Result run = cli.run(
                "datagen", "run", pipeline.toString(), "--experiment", "demo", "--durable-root", root.toString());
        assertThat(run.exitCode()).as(run.err() + run.out()).isZero();

        String[] export = {
            "datagen", "export", "--pipeline", "quiz", "--experiment", "demo", "--durable-root", root.toString()
        };
        Path parquet = home.resolve("quiz.parquet");
        CliRunner.Result exported = cli.run(concat(export, "--out", parquet.toString(), "--format", "parquet"));
        assertThat(exported.exitCode()).as(exported.err()).isZero();
        assertThat(exported.out().strip()).isEqualTo("exported 6 items to " + parquet);
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT count(*) AS n, min(rounds) AS lo, max(rounds) AS hi,"
                        + " count(DISTINCT item_id) AS ids FROM '" + parquet + "'")) {
            assertThat(r.next()).isTrue();
            assertThat(r.getLong("n")).isEqualTo(6);
            assertThat(r.getLong("ids")).isEqualTo(6);
            assertThat(r.getLong("lo")).isEqualTo(2);
            assertThat(r.getLong("hi")).isEqualTo(2);
        }

        String map = "id=item_id,input=question,expected=answer,metadata.rounds=rounds";
        CliRunner.Result uploaded = cli.run("dataset", "upload", parquet.toString(), "--map", map, "--json");
        assertThat(uploaded.exitCode()).as(uploaded.err()).isZero();
        JsonNode fromFile = JSON.readTree(uploaded.out());
        assertThat(fromFile.get("case_count").asLong()).isEqualTo(6);
        assertThat(fromFile.get("name").asText()).isEqualTo("quiz");
        CliRunner.Result stored = cli.run(concat(export, "--to-dataset", "--map", map, "--json"));
        assertThat(stored.exitCode()).as(stored.err()).isZero();
        assertThat(JSON.readTree(stored.out()).get("membership_uuid"))
                .isEqualTo(fromFile.get("membership_uuid"))
                .isNotNull();

        // Usage errors and bad input: one line each, their exit codes, nothing written.
        CliRunner.Result unknown =
                cli.run(concat(export, "--out", home.resolve("x.xml").toString(), "--format", "xml"));
        assertThat(unknown.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(unknown.err().strip())
                .isEqualTo("vigilo: error: --format: unknown format 'xml'; use --format jsonl (one JSON case per line,"
                        + " the default) or parquet (one row per item)");
        assertThat(home.resolve("x.xml")).doesNotExist();
        CliRunner.Result both = cli.run(concat(export, "--to-dataset", "--map", map, "--format", "parquet"));
        assertThat(both.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(both.err()).contains("--format chooses the --out file's format");

        Path shards = home.resolve("hf");
        Files.createDirectories(shards.resolve("data"));
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
                Statement s = c.createStatement()) {
            for (int shard = 0; shard < 2; shard++) {
                s.execute("COPY (SELECT 'q' || i AS qid, 'what is ' || i AS question, i * 2 AS answer FROM range("
                        + (shard * 100) + ", " + (shard * 100 + 100) + ") t(i)) TO '"
                        + shards.resolve("data/train-0000" + shard + "-of-00002.parquet") + "' (FORMAT parquet)");
            }
        }
        CliRunner.Result dir = cli.run(
                "dataset", "upload", shards.toString(), "--map", "id=qid,input=question,expected=answer", "--json");
        assertThat(dir.exitCode()).as(dir.err()).isZero();
        assertThat(JSON.readTree(dir.out()).get("case_count").asLong()).isEqualTo(200);
        assertThat(JSON.readTree(dir.out()).get("name").asText()).isEqualTo("hf");

        CliRunner.Result unmapped = cli.run("dataset", "upload", shards.toString());
        assertThat(unmapped.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(unmapped.err().strip())
                .startsWith("vigilo: error: " + shards.resolve("data/train-00000-of-00002.parquet")
                        + ": row group 0, row 0: ")
                .contains("unknown field \"qid\"")
                .hasLineCount(1);
    }

    private static String[] concat(String[] head, String... tail) {
        String[] all = java.util.Arrays.copyOf(head, head.length + tail.length);
        System.arraycopy(tail, 0, all, head.length, tail.length);
        return all;
    }
}
