package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.ZstdOutputStream;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/**
 * Datasets from compressed JSON lines, CSV and mapped JSON records: the same stored cases as the JSON lines a user
 * would have written by hand, errors at the file's own lines, nothing stored when the file is rejected.
 */
class UploadFormatsTest extends UploadFixture {
    Path write(String name, String text) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, text);
        return file;
    }

    static String jsonl(int count) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < count; i++) {
            b.append("{\"id\":\"c")
                    .append(i)
                    .append("\",\"input\":\"q ")
                    .append(i)
                    .append("\",\"expected\":")
                    .append(i)
                    .append("}\n");
        }
        return b.toString();
    }

    @Test
    void compressedJsonLinesStoreTheSameCasesAsThePlainFile() throws IOException {
        String text = jsonl(3000);
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        Path plain = write("cases.jsonl", text);
        Path gz = dir.resolve("cases.jsonl.gz");
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(gz))) {
            out.write(bytes);
        }
        Path zst = dir.resolve("cases.jsonl.zst");
        try (OutputStream out = new ZstdOutputStream(Files.newOutputStream(zst))) {
            out.write(bytes);
        }
        DatasetEntry a = upload(plain, Optional.empty());
        DatasetEntry b = upload(gz, Optional.empty());
        DatasetEntry c = upload(zst, Optional.empty());
        assertThat(b.name()).isEqualTo("cases");
        for (DatasetEntry e : List.of(b, c)) {
            assertThat(e.indexRoot()).isEqualTo(a.indexRoot());
            assertThat(e.membershipUuid()).isEqualTo(a.membershipUuid());
            assertThat(e.caseCount()).isEqualTo(3000);
            // The source hash is of the JSON lines read: the decompressed bytes.
            assertThat(e.sourceSha256()).isEqualTo(Sha256.of(bytes));
            DatasetReader.open(e, store).verify();
        }
        assertThat(b.sourceBytes()).isEqualTo(Files.size(gz));
    }

    @Test
    void damagedOrMislabelledCompressedFilesAreInvalidAndStoreNothing() throws IOException {
        Path gz = dir.resolve("bad.jsonl.gz");
        try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(gz))) {
            out.write(jsonl(2000).getBytes(StandardCharsets.UTF_8));
        }
        byte[] whole = Files.readAllBytes(gz);
        Files.write(gz, Arrays.copyOf(whole, whole.length / 2));
        rejected(gz, Optional.empty(), 0, "the gzip stream is damaged or truncated");
        Path notGz = write("plain.jsonl.gz", jsonl(3));
        rejected(notGz, Optional.empty(), 0, "not a valid gzip file");
        Path zst = write("plain.jsonl.zst", jsonl(3));
        rejected(zst, Optional.empty(), 0, "the zstd stream is damaged or truncated");
    }

    @Test
    void csvRowsBecomeCasesByTheirHeader() throws IOException {
        Path csv = write(
                "qa.csv",
                "\uFEFFid,input,expected,group,tags,metadata.source\r\n"
                        + "a,\"What is 2, plus 2?\",4,math,easy;arith,book\r\n"
                        + "b,\"Two\nlines\",,,,\r\n"
                        + "\r\n"
                        + "c,\"say \"\"hi\"\"\",hi,talk,,web\r\n");
        DatasetEntry e = upload(csv, Optional.empty());
        assertThat(e.name()).isEqualTo("qa");
        assertThat(storedCases(e))
                .containsExactly(
                        "{\"id\":\"a\",\"input\":\"What is 2, plus 2?\",\"expected\":\"4\",\"group\":\"math\","
                                + "\"tags\":[\"easy\",\"arith\"],\"metadata\":{\"source\":\"book\"}}",
                        "{\"id\":\"b\",\"input\":\"Two\\nlines\"}",
                        "{\"id\":\"c\",\"input\":\"say \\\"hi\\\"\",\"expected\":\"hi\",\"group\":\"talk\","
                                + "\"metadata\":{\"source\":\"web\"}}");
        DatasetReader.open(e, store).verify();
    }

    @Test
    void csvColumnsAreMappedAndJsonCellsParsed() throws IOException {
        Path csv = write(
                "mapped.csv",
                "question,answer,key,extra\n" + "\"{\"\"q\"\": 1}\",\"[1,2]\",k1,x\n" + "\"{\"\"q\"\": 2}\",,k2,y\n");
        DatasetEntry e = upload(
                csv,
                Optional.of(CaseMap.parse("id=key,input=question:json,expected=answer:json,metadata.x=extra", "m")));
        assertThat(storedCases(e))
                .containsExactly(
                        "{\"id\":\"k1\",\"input\":{\"q\":1},\"expected\":[1,2],\"metadata\":{\"x\":\"x\"}}",
                        "{\"id\":\"k2\",\"input\":{\"q\":2},\"metadata\":{\"x\":\"y\"}}");
    }

    @Test
    void jsonRecordsAreMappedOntoCases() throws IOException {
        Path items = write(
                "items.jsonl",
                "{\"item_id\":\"i1\",\"question\":\"Q1\",\"answer\":{\"n\":1},\"score\":5}\n\n"
                        + "{\"item_id\":\"i2\",\"question\":\"Q2\",\"answer\":null,\"score\":4}\n");
        DatasetEntry e = upload(items, Optional.of(CaseMap.parse("id=item_id,input=question,expected=answer", "m")));
        assertThat(storedCases(e))
                .containsExactly(
                        "{\"id\":\"i1\",\"input\":\"Q1\",\"expected\":{\"n\":1}}", "{\"id\":\"i2\",\"input\":\"Q2\"}");
    }

    @Test
    void csvErrorsAreAtTheFilesOwnLines() throws IOException {
        // Line 2-3 is one row (a quoted newline): the rows after it are one line further down than their number.
        String head = "id,input\n" + "a,\"x\ny\"\n" + "b,z\n";
        rejected(write("wide.csv", head + "c,1,2\n"), Optional.empty(), 5, "the row has 3 cells, the header 2");
        rejected(write("dup.csv", head + "a,again\n"), Optional.empty(), 5, "line 5 repeats the id of line 2");
        rejected(write("noid.csv", head + ",empty id\n"), Optional.empty(), 5, "id");
        rejected(
                write("unknown.csv", "id,question\na,b\n"),
                Optional.empty(),
                1,
                "column \"question\" is not a case field");
        rejected(
                write("missing.csv", "id,input\na,b\n"),
                Optional.of(CaseMap.parse("id=id,input=question", "m")),
                1,
                "--map names column \"question\", which the header does not have (columns: id, input)");
        rejected(
                write("json.csv", "id,input\na,{nope\n"),
                Optional.of(CaseMap.parse("id=id,input=input:json", "m")),
                2,
                "column \"input\" (mapped onto input as JSON) is not JSON");
    }

    @Test
    void aRecordMissingAMappedFieldIsNamed() throws IOException {
        Path items = write("items.jsonl", "{\"item_id\":\"i1\",\"question\":\"Q1\"}\n{\"item_id\":\"i2\"}\n");
        rejected(
                items,
                Optional.of(CaseMap.parse("id=item_id,input=question", "m")),
                2,
                "record \"i2\": no field \"question\" (mapped onto input)");
    }

    @Test
    void badMapsAreRejectedBeforeAnyRead() {
        assertThatThrownBy(() -> CaseMap.parse("input=q", "--map"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("--map: nothing is mapped onto \"id\"; add id=FIELD");
        assertThatThrownBy(() -> CaseMap.parse("id=a,input=b,answer=c", "--map"))
                .hasMessageContaining("\"answer\" is not a case field");
        assertThatThrownBy(() -> CaseMap.parse("id=a,id=b,input=c", "--map")).hasMessageContaining("mapped twice");
        assertThatThrownBy(() -> CaseMap.parse("id=a,input", "--map")).hasMessageContaining("is not TARGET=SOURCE");
        assertThat(CaseMap.parse(" id = a , input = b:json ", "--map").toString())
                .isEqualTo("id=a,input=b:json");
    }

    void rejected(Path file, Optional<CaseMap> map, long line, String message) {
        rejected(file, map, message, e -> {
            assertThat(e.line()).as("line of %s", e.getMessage()).isEqualTo(line);
            assertThat(e.getMessage()).startsWith(file.toString());
        });
    }
}
