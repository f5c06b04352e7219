package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectInfo;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dataset catalog against a real PostgreSQL and a real object store; subclasses choose the store.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class DatasetCatalogContract {
    protected ControlDatabase control;
    protected DatasetCatalog catalog;
    protected ObjectStore store;

    @TempDir
    Path dir;

    /** A fresh, empty store for each test. */
    protected abstract ObjectStore newStore();

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
    void freshStore() {
        store = newStore();
    }

    static String caseLine(int i) {
        return "{\"id\":\"case-" + i + "\",\"input\":{\"q\":\"question " + i + " é😀\",\"n\":" + i + "},"
                + "\"expected\":\"" + (i * 2) + "\",\"group\":\"g" + (i % 3) + "\",\"tags\":[\"t" + (i % 2) + "\"]}";
    }

    Path writeCases(String name, int count) throws IOException {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < count; i++) {
            b.append(caseLine(i)).append('\n');
        }
        Path file = dir.resolve(name);
        Files.writeString(file, b.toString());
        return file;
    }

    List<StoredCase> readAll(DatasetEntry entry) {
        List<StoredCase> cases = new ArrayList<>();
        DatasetReader.open(entry, store).forEachCase(cases::add);
        return cases;
    }

    @Test
    void uploadStoresEveryCaseInOrderAndVerifies() throws IOException {
        Path file = writeCases("three-files.jsonl", 2500);
        DatasetEntry entry = catalog.upload(UploadRequest.of(file), store, UploadProgress.NONE);

        assertThat(entry.name()).isEqualTo("three-files");
        assertThat(entry.caseCount()).isEqualTo(2500);
        assertThat(entry.sourceSha256()).isEqualTo(Sha256.of(Files.readAllBytes(file)));
        assertThat(entry.sourceBytes()).isEqualTo(Files.size(file));
        assertThat(entry.storage()).isEqualTo(store.binding());
        assertThat(catalog.get(entry.uploadId())).isEqualTo(entry);

        VerifyReport report = DatasetReader.open(entry, store).verify();
        assertThat(report.caseCount()).isEqualTo(2500);
        assertThat(report.caseFiles()).isEqualTo(3); // 1024 + 1024 + 452
        assertThat(report.indexDocuments()).isEqualTo(1);

        List<StoredCase> cases = readAll(entry);
        assertThat(cases).hasSize(2500);
        for (int i = 0; i < cases.size(); i++) {
            StoredCase c = cases.get(i);
            assertThat(c.ordinal()).isEqualTo(i);
            assertThat(c.id()).isEqualTo("case-" + i);
            assertThat(new String(c.caseJson(), StandardCharsets.UTF_8)).isEqualTo(caseLine(i));
            assertThat(c.sha256()).isEqualTo(Sha256.of(caseLine(i).getBytes(StandardCharsets.UTF_8)));
            assertThat(c.fields().group()).contains("g" + (i % 3));
            assertThat(c.fields().tags()).containsExactly("t" + (i % 2));
        }
    }

    @Test
    void identicalContentGivesIdenticalIdentitiesAndReusesFiles() throws IOException {
        Path file = writeCases("same.jsonl", 300);
        DatasetEntry first = catalog.upload(UploadRequest.of(file), store, UploadProgress.NONE);
        int objects = store.list("datasets/", deadline()).size();
        DatasetEntry second = catalog.upload(UploadRequest.of(file), store, UploadProgress.NONE);

        assertThat(second.uploadId()).isNotEqualTo(first.uploadId());
        assertThat(second.indexRoot()).isEqualTo(first.indexRoot());
        assertThat(second.membershipUuid()).isEqualTo(first.membershipUuid());
        assertThat(store.list("datasets/", deadline())).hasSize(objects);

        Path reordered = dir.resolve("reordered.jsonl");
        List<String> lines = new ArrayList<>(Files.readAllLines(file));
        java.util.Collections.swap(lines, 0, 1);
        Files.write(reordered, lines);
        DatasetEntry third = catalog.upload(UploadRequest.of(reordered), store, UploadProgress.NONE);
        assertThat(third.membershipUuid()).isNotEqualTo(first.membershipUuid());
    }

    @Test
    void aChosenUploadIdIsIdempotentAndRejectsOtherContent() throws IOException {
        Path file = writeCases("chosen.jsonl", 10);
        UUID id = UUID.randomUUID();
        UploadRequest request = new UploadRequest(file, Optional.empty(), Optional.of(id));
        DatasetEntry first = catalog.upload(request, store, UploadProgress.NONE);
        DatasetEntry again = catalog.upload(request, store, UploadProgress.NONE);
        assertThat(again).isEqualTo(first);
        assertThat(first.uploadId()).isEqualTo(id);

        Path other = writeCases("chosen.jsonl.other", 11);
        assertThatThrownBy(() -> catalog.upload(
                        new UploadRequest(other, Optional.of("chosen"), Optional.of(id)), store, UploadProgress.NONE))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining(id.toString());
        assertThat(catalog.get(id)).isEqualTo(first);
    }

    @Test
    void deepIndexesStayWithinEightLevelsAndVerify() throws IOException {
        Path file = writeCases("deep.jsonl", 200);
        DatasetUploader uploader = new DatasetUploader(
                store,
                new CatalogRows(control::jdbi),
                UploadProgress.NONE,
                new UploadLayout(1, DatasetLimits.CASE_FILE_TARGET_BYTES, 2));
        DatasetEntry entry = uploader.upload(UploadRequest.of(file));
        // 200 case files, fan-out 2: 100, 50, 25, 13, 7, 4, 2, 1 documents -> 8 levels.
        assertThat(entry.indexLevels()).isEqualTo(8);
        VerifyReport report = DatasetReader.open(entry, store).verify();
        assertThat(report.caseFiles()).isEqualTo(200);
        assertThat(report.indexDocuments()).isEqualTo(100 + 50 + 25 + 13 + 7 + 4 + 2 + 1);
        assertThat(readAll(entry)).extracting(StoredCase::id).first().isEqualTo("case-0");

        Path tooDeep = writeCases("too-deep.jsonl", 300);
        DatasetUploader narrow = new DatasetUploader(
                store,
                new CatalogRows(control::jdbi),
                UploadProgress.NONE,
                new UploadLayout(1, DatasetLimits.CASE_FILE_TARGET_BYTES, 2));
        assertThatThrownBy(() -> narrow.upload(UploadRequest.of(tooDeep)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("more than 8 index levels");
    }

    @Test
    void crlfAndByteOrderMarkAreAcceptedAndHashedAsSubmitted() throws IOException {
        byte[] bom = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
        String body = caseLine(1) + "\r\n\r\n" + caseLine(2) + "\r\n";
        Path file = dir.resolve("crlf.jsonl");
        byte[] bytes = concat(bom, body.getBytes(StandardCharsets.UTF_8));
        Files.write(file, bytes);
        DatasetEntry entry = catalog.upload(UploadRequest.of(file), store, UploadProgress.NONE);
        assertThat(entry.caseCount()).isEqualTo(2);
        assertThat(entry.sourceSha256()).isEqualTo(Sha256.of(bytes));
        assertThat(readAll(entry))
                .extracting(c -> new String(c.caseJson(), StandardCharsets.UTF_8))
                .containsExactly(caseLine(1), caseLine(2));
    }

    @Test
    void aCatalogEntryThatDisagreesWithTheFilesFailsVerification() throws IOException {
        DatasetEntry entry = catalog.upload(UploadRequest.of(writeCases("fold.jsonl", 20)), store, UploadProgress.NONE);
        DatasetEntry wrongMembership = new DatasetEntry(
                entry.uploadId(),
                entry.name(),
                entry.sourceSha256(),
                entry.sourceBytes(),
                UUID.randomUUID(),
                entry.caseCount(),
                entry.indexRoot(),
                entry.indexLevels(),
                entry.storage(),
                entry.createdAt());
        assertThatThrownBy(() -> DatasetReader.open(wrongMembership, store).verify())
                .isInstanceOf(DatasetDamagedException.class)
                .hasMessageContaining("membership");
        DatasetEntry wrongCount = new DatasetEntry(
                entry.uploadId(),
                entry.name(),
                entry.sourceSha256(),
                entry.sourceBytes(),
                entry.membershipUuid(),
                21,
                entry.indexRoot(),
                entry.indexLevels(),
                entry.storage(),
                entry.createdAt());
        assertThatThrownBy(() -> DatasetReader.open(wrongCount, store).verify())
                .isInstanceOf(DatasetDamagedException.class)
                .hasMessageContaining("21");
    }

    // ---- bad input: a clear error with its location, and nothing stored anywhere ----

    void rejected(String fileName, byte[] content, long line, int column, String message) throws IOException {
        Path file = dir.resolve(fileName);
        Files.write(file, content);
        rejectedFile(file, line, column, message);
    }

    void rejectedFile(Path file, long line, int column, String message) {
        int rowsBefore = catalog.list().size();
        assertThatThrownBy(() -> catalog.upload(UploadRequest.of(file), store, UploadProgress.NONE))
                .isInstanceOf(InvalidDatasetException.class)
                .hasMessageContaining(message)
                .satisfies(e -> {
                    InvalidDatasetException invalid = (InvalidDatasetException) e;
                    assertThat(invalid.line()).as("line").isEqualTo(line);
                    assertThat(invalid.column()).as("column").isEqualTo(column);
                    assertThat(e.getMessage()).startsWith(file.toString());
                });
        assertThat(catalog.list()).hasSize(rowsBefore);
        assertThat(store.list("", deadline())).isEmpty();
    }

    static byte[] lines(String... lines) {
        return (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void invalidJsonNamesLineAndColumn() throws IOException {
        rejected(
                "bad-json.jsonl",
                lines(caseLine(0), caseLine(1), "{\"id\":\"x\",\"input\":[1,2}"),
                3,
                23,
                "invalid JSON");
    }

    @Test
    void duplicateIdNamesBothLines() throws IOException {
        rejected(
                "dup.jsonl",
                lines(caseLine(0), caseLine(1), caseLine(2), caseLine(1)),
                4,
                0,
                "duplicate case id \"case-1\": line 4 repeats the id of line 2");
    }

    @Test
    void missingOrNonStringId() throws IOException {
        rejected("no-id.jsonl", lines(caseLine(0), "{\"input\":1}"), 2, 1, "has no \"id\"");
        rejected("num-id.jsonl", lines("{\"id\":12,\"input\":1}"), 1, 2, "\"id\" must be a string");
    }

    @Test
    void lineThatIsNotAnObject() throws IOException {
        rejected("array.jsonl", lines(caseLine(0), "[\"not\",\"a\",\"case\"]"), 2, 1, "must be a JSON object");
    }

    @Test
    void emptyAndBlankFiles() throws IOException {
        rejected("empty.jsonl", new byte[0], 0, 0, "holds no cases");
        rejected("blank.jsonl", "\n  \n\n".getBytes(StandardCharsets.US_ASCII), 0, 0, "holds no cases");
    }

    @Test
    void bytesThatAreNotUtf8() throws IOException {
        byte[] bad = lines(caseLine(0), "{\"id\":\"b\",\"input\":\"caf\u00e9\"}");
        // Replace the two-byte é of line 2 with a lone Latin-1 byte.
        byte[] latin1 = new byte[bad.length - 1];
        int at = indexOf(bad, (byte) 0xC3);
        System.arraycopy(bad, 0, latin1, 0, at);
        latin1[at] = (byte) 0xE9;
        System.arraycopy(bad, at + 2, latin1, at + 1, bad.length - at - 2);
        rejected("latin1.jsonl", latin1, 2, 23, "not valid UTF-8");
    }

    @Test
    void aFileSavedAsUtf16SaysSo() throws IOException {
        byte[] wide = (caseLine(0) + "\n").getBytes(StandardCharsets.UTF_16LE);
        byte[] marked = new byte[wide.length + 2];
        marked[0] = (byte) 0xFF;
        marked[1] = (byte) 0xFE;
        System.arraycopy(wide, 0, marked, 2, wide.length);
        rejected(
                "utf16.jsonl",
                marked,
                1,
                1,
                "is UTF-16 (little-endian) text (it starts with the byte order mark FF FE); save it as UTF-8");
        rejected("utf16be.jsonl", (caseLine(0) + "\n").getBytes(StandardCharsets.UTF_16), 1, 1, "UTF-16 (big-endian)");
    }

    @Test
    void aCaseNestedTooDeeplySaysWhereInPlainWords() throws IOException {
        // {"id":"d","input": is 18 characters: the 1000th bracket, level 1001 (the case object is level 1), is in
        // column 1018.
        String deep = "{\"id\":\"d\",\"input\":" + "[".repeat(1200) + "]".repeat(1200) + "}";
        rejected("deep.jsonl", lines(caseLine(0), deep), 2, 1018, "nested deeper than 1000 levels");
        Path file = dir.resolve("deep.jsonl");
        assertThatThrownBy(() -> catalog.upload(UploadRequest.of(file), store, UploadProgress.NONE))
                .hasMessageNotContaining("StreamReadConstraints");
    }

    @Test
    void theFirstInvalidLineOfTheFileIsReportedAcrossValidationBatches() throws IOException {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 9000; i++) {
            lines.add(caseLine(i));
        }
        lines.set(99, "{\"id\":\"x\"}"); // line 100: no input
        lines.set(7999, "not json"); // line 8000, in a later batch
        rejected("two-errors.jsonl", lines(lines.toArray(String[]::new)), 100, 1, "has no \"input\"");

        lines.set(7999, "{\"id\":\"big\",\"input\":\"" + "x".repeat(DatasetLimits.MAX_CASE_BYTES) + "\"}");
        rejected("error-then-huge.jsonl", lines(lines.toArray(String[]::new)), 100, 1, "has no \"input\"");
    }

    @Test
    void missingFile() {
        rejectedFile(dir.resolve("does-not-exist.jsonl"), 0, 0, "no such file");
    }

    @Test
    void oversizedCase() throws IOException {
        String huge = "{\"id\":\"big\",\"input\":\"" + "x".repeat(DatasetLimits.MAX_CASE_BYTES) + "\"}";
        rejected("huge.jsonl", lines(caseLine(0), huge), 2, 0, "longer than");
    }

    static int indexOf(byte[] bytes, byte b) {
        for (int i = bytes.length - 1; i >= 0; i--) {
            if (bytes[i] == b) {
                return i;
            }
        }
        throw new AssertionError("byte not found");
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = new byte[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    static Deadline deadline() {
        return Deadline.after(Duration.ofSeconds(30));
    }

    List<ObjectInfo> storedObjects(String prefix) {
        return store.list(prefix, deadline());
    }
}
