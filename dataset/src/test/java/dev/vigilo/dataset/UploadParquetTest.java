package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Datasets from Parquet files written by an independent writer (DuckDB, as a Hugging Face dataset would be: typed
 * columns, several row groups, a directory of shards): the same stored cases and membership as the JSON lines of the
 * same rows (DuckDB's own JSON export), typed values as docs/formats/dataset.md says, errors at their shard, row group
 * and row, nothing stored when the file is rejected.
 */
class UploadParquetTest extends UploadFixture {
    /** 3000 cases, every column a case field; no nulls, so DuckDB's JSON lines hold the same fields. */
    static final String CASES = "SELECT 'c' || i AS id, 'q ' || i AS input, i * 7 AS expected,"
            + " 'g' || (i % 5) AS \"group\", ['t' || (i % 3), 'all'] AS tags,"
            + " {'source': 'duck', 'n': i, 'ok': i % 2 = 0} AS metadata FROM range(3000) t(i)";

    /** Records as a Hugging Face dataset has them: other names, a raw bytes column no case needs. */
    static final String RECORDS = "SELECT 'r' || i AS item_id, 'what is ' || i AS question, i % 10 AS answer,"
            + " 'topic' || (i % 4) AS topic, ['x', 'y' || i] AS labels, 'img'::BLOB AS image FROM range(2500) t(i)";

    /** Runs {@code sql} statements in an in-memory DuckDB. */
    static void duck(String... sql) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:duckdb:");
                Statement s = c.createStatement()) {
            for (String statement : sql) {
                s.execute(statement);
            }
        }
    }

    static String copy(String query, Path to, String options) {
        return "COPY (" + query + ") TO '" + to + "' (" + options + ")";
    }

    @Test
    void aParquetFileStoresTheSameCasesAsTheJsonLinesOfItsRows() throws Exception {
        Path parquet = dir.resolve("cases.parquet");
        Path jsonl = dir.resolve("cases.jsonl");
        duck(copy(CASES, parquet, "FORMAT parquet, ROW_GROUP_SIZE 1024"), copy(CASES, jsonl, "FORMAT json"));
        DatasetEntry fromJsonl = upload(jsonl, Optional.empty());
        DatasetEntry fromParquet = upload(parquet, Optional.empty());
        assertThat(fromParquet.name()).isEqualTo("cases");
        assertThat(fromParquet.caseCount()).isEqualTo(3000);
        assertThat(storedCases(fromParquet)).isEqualTo(storedCases(fromJsonl));
        assertThat(fromParquet.membershipUuid()).isEqualTo(fromJsonl.membershipUuid());
        assertThat(fromParquet.indexRoot()).isEqualTo(fromJsonl.indexRoot());
        assertThat(fromParquet.sourceBytes()).isEqualTo(Files.size(parquet));
        DatasetReader.open(fromParquet, store).verify();
        assertThat(storedCases(fromParquet).get(0))
                .isEqualTo("{\"id\":\"c0\",\"input\":\"q 0\",\"expected\":0,\"group\":\"g0\",\"tags\":[\"t0\",\"all\"],"
                        + "\"metadata\":{\"source\":\"duck\",\"n\":0,\"ok\":true}}");
    }

    @Test
    void aDirectoryOfShardsIsReadInPathOrderAsOneDataset() throws Exception {
        Path whole = dir.resolve("whole.parquet");
        Path hf = dir.resolve("hf");
        Files.createDirectories(hf.resolve("data"));
        // Shards named as the Hugging Face hub names them; a file that is not Parquet beside them is not read.
        duck(
                copy(CASES, whole, "FORMAT parquet"),
                copy(
                        "SELECT * FROM (" + CASES + ") WHERE CAST(substr(id, 2) AS INT) < 1700",
                        hf.resolve("data/train-00000-of-00002.parquet"),
                        "FORMAT parquet, ROW_GROUP_SIZE 500"),
                copy(
                        "SELECT * FROM (" + CASES + ") WHERE CAST(substr(id, 2) AS INT) >= 1700",
                        hf.resolve("data/train-00001-of-00002.parquet"),
                        "FORMAT parquet"));
        Files.writeString(hf.resolve("README.md"), "# a dataset card\n");
        DatasetEntry one = upload(whole, Optional.empty());
        DatasetEntry shards = upload(hf, Optional.empty());
        assertThat(shards.name()).isEqualTo("hf");
        assertThat(shards.caseCount()).isEqualTo(3000);
        assertThat(shards.membershipUuid()).isEqualTo(one.membershipUuid());
        assertThat(shards.sourceBytes())
                .isEqualTo(Files.size(hf.resolve("data/train-00000-of-00002.parquet"))
                        + Files.size(hf.resolve("data/train-00001-of-00002.parquet")));
        DatasetReader.open(shards, store).verify();
    }

    @Test
    void mappedColumnsGiveTheSameCasesAsTheMappedJsonLines() throws Exception {
        Path parquet = dir.resolve("records.parquet");
        Path jsonl = dir.resolve("records.jsonl");
        duck(
                copy(RECORDS, parquet, "FORMAT parquet, ROW_GROUP_SIZE 1000"),
                copy(RECORDS.replace(", 'img'::BLOB AS image", ""), jsonl, "FORMAT json"));
        CaseMap map = CaseMap.parse("id=item_id,input=question,expected=answer,group=topic,tags=labels", "--map");
        DatasetEntry fromJsonl = upload(jsonl, Optional.of(map));
        DatasetEntry fromParquet = upload(parquet, Optional.of(map));
        assertThat(fromParquet.caseCount()).isEqualTo(2500);
        assertThat(fromParquet.membershipUuid()).isEqualTo(fromJsonl.membershipUuid());
        assertThat(storedCases(fromParquet).get(3))
                .isEqualTo("{\"id\":\"r3\",\"input\":\"what is 3\",\"expected\":3,\"group\":\"topic3\","
                        + "\"tags\":[\"x\",\"y3\"]}");
        // Unmapped, the raw bytes column is an error at the first row that has one.
        rejected(parquet, Optional.empty(), parquet, "row group 0, row 0: column \"image\" holds raw bytes");
    }

    @Test
    void typedValuesBecomeTheirJson() throws Exception {
        Path parquet = dir.resolve("typed.parquet");
        duck(
                "CREATE TABLE t AS SELECT 'a' AS id, 'x' AS input,"
                        + " DATE '2024-02-29' AS d, TIMESTAMP '2024-01-02 03:04:05.25' AS ts,"
                        + " TIMESTAMPTZ '2024-01-02 03:04:05+00' AS tz, TIME '12:30:00' AS tm,"
                        + " 12.50::DECIMAL(6,2) AS dec, 1.5::DOUBLE AS dbl, 2::UTINYINT AS small, 3::HUGEINT AS big,"
                        + " '6ba7b810-9dad-11d1-80b4-00c04fd430c8'::UUID AS u, MAP {'k': 1, 'j': 2} AS m,"
                        + " [{'a': 1, 'b': NULL}, NULL] AS l, NULL::VARCHAR AS gone, false AS f",
                copy("SELECT * FROM t", parquet, "FORMAT parquet"));
        CaseMap map = CaseMap.parse(
                "id=id,input=input,metadata.d=d,metadata.ts=ts,metadata.tz=tz,metadata.tm=tm,metadata.dec=dec,"
                        + "metadata.dbl=dbl,metadata.small=small,metadata.u=u,metadata.m=m,metadata.l=l,"
                        + "metadata.gone=gone,metadata.f=f",
                "--map");
        assertThat(storedCases(upload(parquet, Optional.of(map))))
                .containsExactly("{\"id\":\"a\",\"input\":\"x\",\"metadata\":{\"d\":\"2024-02-29\","
                        + "\"ts\":\"2024-01-02T03:04:05.25\",\"tz\":\"2024-01-02T03:04:05Z\",\"tm\":\"12:30:00\","
                        + "\"dec\":12.50,\"dbl\":1.5,\"small\":2,\"u\":\"6ba7b810-9dad-11d1-80b4-00c04fd430c8\","
                        + "\"m\":{\"k\":1,\"j\":2},\"l\":[{\"a\":1},null],\"f\":false}}");
    }

    @Test
    void badRowsAreRejectedAtTheirShardRowGroupAndRow() throws Exception {
        Path nan = dir.resolve("nan.parquet");
        Path noId = dir.resolve("noid.parquet");
        Path shards = dir.resolve("dup");
        Files.createDirectories(shards);
        duck(
                copy(
                        "SELECT 'c' || i AS id, 'q' AS input, CASE WHEN i = 3000 THEN 'NaN'::DOUBLE ELSE i END"
                                + " AS expected FROM range(5000) t(i)",
                        nan,
                        "FORMAT parquet, ROW_GROUP_SIZE 2048"),
                copy(
                        "SELECT CASE WHEN i = 7 THEN NULL ELSE 'c' || i END AS id, 'q' AS input FROM range(10) t(i)",
                        noId,
                        "FORMAT parquet"),
                copy(
                        "SELECT 'c' || i AS id, 'q' AS input FROM range(10) t(i)",
                        shards.resolve("a.parquet"),
                        "FORMAT" + " parquet"),
                copy(
                        "SELECT 'd' || i AS id, 'q' AS input FROM range(4) t(i) UNION ALL SELECT 'c3', 'q'",
                        shards.resolve("b.parquet"),
                        "FORMAT parquet"));
        rejected(nan, Optional.empty(), nan, "row group 1, row 952: column \"expected\" holds NaN");
        rejected(noId, Optional.empty(), noId, "row group 0, row 7: ");
        rejected(
                shards,
                Optional.empty(),
                shards.resolve("b.parquet"),
                "row group 0, row 4: duplicate case id \"c3\": it repeats the id of " + shards.resolve("a.parquet")
                        + " row group 0, row 3");
        rejected(
                nan,
                Optional.of(CaseMap.parse("id=id,input=question", "--map")),
                nan,
                "--map names column \"question\", which the file does not have (columns: id, input, expected)");
        Path text = dir.resolve("text.parquet");
        Files.writeString(text, "{\"id\":\"a\",\"input\":\"b\"}\n");
        rejected(text, Optional.empty(), text, "not a Parquet file");
        Path empty = Files.createDirectories(dir.resolve("empty"));
        rejected(empty, Optional.empty(), empty, "the directory holds no .parquet file");
    }

    void rejected(Path file, Optional<CaseMap> map, Path named, String message) {
        rejected(file, map, message, e -> assertThat(e.getMessage()).startsWith(named + ": "));
    }
}
