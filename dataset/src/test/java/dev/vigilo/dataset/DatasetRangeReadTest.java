package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StoreBinding;
import dev.vigilo.storage.StoreSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Range reads over a real uploaded dataset in a local store: 95 cases in case files of 10 (the last holds 5) under
 * a three-level index of fan-out 3.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DatasetRangeReadTest {
    private static final int CASES = 95;
    private static final int PER_FILE = 10;

    private ControlDatabase control;
    private ObjectStore store;
    private Path root;
    private DatasetEntry entry;
    private RecordingReader recording;

    @TempDir
    Path dir;

    @BeforeAll
    void openControl() {
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
    }

    @AfterAll
    void closeControl() {
        control.close();
    }

    @BeforeEach
    void upload() throws IOException {
        root = dir.resolve("objects-" + UUID.randomUUID());
        store = ObjectStores.open(new StoreSpec.Local("local", root));
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < CASES; i++) {
            lines.append(DatasetCatalogContract.caseLine(i)).append('\n');
        }
        Path file = dir.resolve("range-" + UUID.randomUUID() + ".jsonl");
        Files.writeString(file, lines);
        entry = new DatasetUploader(
                        store,
                        new CatalogRows(control::jdbi),
                        UploadProgress.NONE,
                        new UploadLayout(PER_FILE, DatasetLimits.CASE_FILE_TARGET_BYTES, 3))
                .upload(UploadRequest.of(file));
        assertThat(entry.indexLevels()).isEqualTo(3); // 10 case files -> 4 -> 2 -> 1 documents
        recording = new RecordingReader(store);
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    private DatasetReader reader() {
        return DatasetReader.open(entry, recording);
    }

    private List<StoredCase> range(long first, long count) {
        List<StoredCase> cases = new ArrayList<>();
        reader().forEachCaseInRange(first, count, cases::add);
        return cases;
    }

    private static void assertCases(List<StoredCase> cases, long first, long count) {
        assertThat(cases).hasSize((int) count);
        for (int i = 0; i < count; i++) {
            long ordinal = first + i;
            StoredCase c = cases.get(i);
            assertThat(c.ordinal()).isEqualTo(ordinal);
            assertThat(c.id()).isEqualTo("case-" + ordinal);
            assertThat(new String(c.caseJson(), StandardCharsets.UTF_8))
                    .isEqualTo(DatasetCatalogContract.caseLine((int) ordinal));
            assertThat(c.sha256()).isEqualTo(Sha256.of(c.caseJson()));
        }
    }

    @Test
    void rangesAtFileBoundariesAcrossFilesSingleCasesAndTheLastCase() {
        long[][] ranges = {
            {0, 10}, {10, 10}, {9, 2}, {19, 1}, {20, 1}, {5, 30}, {0, CASES}, {37, 1}, {90, 5}, {94, 1}, {89, 6}
        };
        for (long[] r : ranges) {
            assertCases(range(r[0], r[1]), r[0], r[1]);
        }
    }

    @Test
    void everyRangeMatchesTheFullTraversalAndItsFiles() {
        List<StoredCase> all = new ArrayList<>();
        DatasetReader.open(entry, store).forEachCase(all::add);
        assertCases(all, 0, CASES);
        for (long first = 0; first < CASES; first++) {
            for (long count : new long[] {1, 2, 9, 10, 11, 21, CASES - first}) {
                if (first + count > CASES) {
                    continue;
                }
                List<StoredCase> got = range(first, count);
                assertThat(got)
                        .extracting(StoredCase::id)
                        .containsExactlyElementsOf(all.subList((int) first, (int) (first + count)).stream()
                                .map(StoredCase::id)
                                .toList());

                List<CaseFileSpan> files = reader().caseFilesInRange(first, count);
                long firstFile = first / PER_FILE;
                long lastFile = (first + count - 1) / PER_FILE;
                assertThat(files).hasSize((int) (lastFile - firstFile + 1));
                assertThat(files.get(0).firstOrdinal()).isEqualTo(firstFile * PER_FILE);
                assertThat(files.get(files.size() - 1).endOrdinal())
                        .isEqualTo(Math.min(CASES, (lastFile + 1) * PER_FILE));
                for (int i = 1; i < files.size(); i++) {
                    assertThat(files.get(i).firstOrdinal())
                            .isEqualTo(files.get(i - 1).endOrdinal());
                }
            }
        }
    }

    @Test
    void onlyTheIndexPathAndTheOverlappingCaseFilesAreRead() {
        List<CaseFileSpan> files = reader().caseFilesInRange(20, 10);
        assertThat(files).hasSize(1);
        assertThat(recording.caseFileReads()).isEmpty();
        assertThat(recording.indexReads()).hasSize(3); // root, one level-1 and one level-0 document

        recording.clear();
        assertCases(range(20, 10), 20, 10);
        assertThat(recording.caseFileReads()).containsExactly(files.get(0).ref().key());
        assertThat(recording.indexReads()).hasSize(3);

        recording.clear();
        assertCases(range(28, 4), 28, 4); // ordinals 28..31 live in the files [20,30) and [30,40)
        assertThat(recording.caseFileReads())
                .containsExactlyElementsOf(reader().caseFilesInRange(28, 4).stream()
                        .map(f -> f.ref().key())
                        .toList());
        assertThat(recording.caseFileReads()).hasSize(2);

        recording.clear();
        List<StoredCase> fromFile = new ArrayList<>();
        reader().forEachCaseInFile(files.get(0), 25, 100, fromFile::add);
        assertCases(fromFile, 25, 5);
        assertThat(recording.caseFileReads()).containsExactly(files.get(0).ref().key());
        assertThat(recording.indexReads()).isEmpty();
    }

    @Test
    void rangesOutsideTheDatasetAreInvalidInputAndReadNothing() {
        long[][] bad = {{-1, 1}, {0, 0}, {3, -1}, {CASES, 1}, {90, 6}, {Long.MAX_VALUE, 1}, {1, Long.MAX_VALUE}};
        for (long[] r : bad) {
            assertThatThrownBy(() -> reader().forEachCaseInRange(r[0], r[1], c -> {}))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("[" + r[0] + ", ")
                    .hasMessageContaining(entry.uploadId().toString())
                    .hasMessageContaining("[0, " + CASES + ")");
            assertThatThrownBy(() -> reader().caseFilesInRange(r[0], r[1])).isInstanceOf(InvalidInputException.class);
        }
        CaseFileSpan file = reader().caseFilesInRange(20, 1).get(0);
        assertThatThrownBy(() -> reader().forEachCaseInFile(file, 30, 5, c -> {}))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(file.ref().key().value());
        recording.clear();
        assertThatThrownBy(() -> reader().forEachCaseInRange(CASES, 1, c -> {}))
                .isInstanceOf(InvalidInputException.class);
        assertThat(recording.all()).isEmpty();
    }

    @Test
    void damageInATouchedFileOutsideTheSliceFailsTheRead_andUntouchedFilesAreNotRead() throws IOException {
        List<CaseFileSpan> files = reader().caseFilesInRange(0, CASES);
        CaseFileSpan victim = files.get(2); // ordinals 20..29
        Path path = root.resolve(victim.ref().key().value());
        byte[] bytes = Files.readAllBytes(path);
        bytes[bytes.length - 10] ^= 0x01; // inside the last record, ordinal 29
        Files.write(path, bytes);

        List<StoredCase> passed = new ArrayList<>();
        assertThatThrownBy(() -> reader().forEachCaseInRange(20, 2, passed::add))
                .isInstanceOf(DatasetDamagedException.class)
                .satisfies(e -> assertThat(((DatasetDamagedException) e).key())
                        .isEqualTo(victim.ref().key()));
        assertThat(passed).isEmpty();

        // Ranges whose files are intact read fine: the damaged file is never read for them.
        recording.clear();
        assertCases(range(10, 10), 10, 10);
        assertCases(range(30, 65), 30, 65);
        assertThat(recording.caseFileReads()).doesNotContain(victim.ref().key());
    }

    @Test
    void aRecordOutsideTheSliceThatContradictsItsHashFailsTheReadEvenWhenTheFileMatchesItsReference() {
        // A case file whose bytes match the index reference but whose record 3 carries the wrong case hash:
        // only checking every record of the file finds it.
        CaseFileFormat.Builder builder = new CaseFileFormat.Builder();
        for (int i = 0; i < 4; i++) {
            byte[] line = DatasetCatalogContract.caseLine(i).getBytes(StandardCharsets.UTF_8);
            Sha256 sha = i == 3 ? Sha256.of("something else".getBytes(StandardCharsets.UTF_8)) : Sha256.of(line);
            builder.add(i, "case-" + i, sha, line, line.length);
        }
        ObjectRef caseFile = store.create(ObjectKey.of("crafted/cases"), builder.encode(), soon());
        ObjectRef index = store.create(
                ObjectKey.of("crafted/index"),
                IndexDocument.of(0, List.of(new IndexEntry(caseFile, 0, 4))).encode(),
                soon());
        DatasetEntry crafted = new DatasetEntry(
                UUID.randomUUID(),
                "crafted",
                Sha256.of(new byte[0]),
                0,
                UUID.randomUUID(),
                4,
                index,
                1,
                store.binding(),
                Instant.now());

        List<StoredCase> passed = new ArrayList<>();
        assertThatThrownBy(() -> DatasetReader.open(crafted, store).forEachCaseInRange(0, 2, passed::add))
                .isInstanceOf(DatasetDamagedException.class)
                .hasMessageContaining("case 3")
                .satisfies(e -> assertThat(((DatasetDamagedException) e).key()).isEqualTo(caseFile.key()));
        assertThat(passed).isEmpty();
    }

    @Test
    void readersSharingADecodedCacheReadAndDecodeEachFileOnce() {
        DecodedFileCache decoded = new DecodedFileCache(DecodedFileCache.DEFAULT_MAX_CHARGED_BYTES);
        List<StoredCase> first = new ArrayList<>();
        DatasetReader.open(entry, recording, decoded).forEachCaseInRange(25, 10, first::add);
        assertCases(first, 25, 10);
        assertThat(recording.caseFileReads()).hasSize(2);
        assertThat(recording.indexReads()).hasSize(4); // root, one level-1 document, two level-0 documents

        // Other readers of the same cache (the worker's next chunks) read nothing: every file is retained decoded.
        recording.clear();
        for (long[] r : new long[][] {{25, 10}, {20, 3}, {33, 7}}) {
            List<StoredCase> again = new ArrayList<>();
            DatasetReader.open(entry, recording, decoded).forEachCaseInRange(r[0], r[1], again::add);
            assertCases(again, r[0], r[1]);
            assertThat(DatasetReader.open(entry, recording, decoded).caseFilesInRange(r[0], r[1]))
                    .isEqualTo(reader().caseFilesInRange(r[0], r[1]));
        }
        assertThat(recording.caseFileReads()).isEmpty();
        DecodedFileCache.Stats stats = decoded.stats();
        assertThat(stats.files()).isEqualTo(6); // 4 index documents, 2 case files
        assertThat(stats.misses()).isEqualTo(6);
        assertThat(stats.hits()).isPositive();
        assertThat(stats.chargedBytes()).isPositive();

        // A full traversal through the cache gives what the reader without one gives.
        List<StoredCase> all = new ArrayList<>();
        DatasetReader.open(entry, recording, decoded).withReadAhead(3).forEachCase(all::add);
        assertCases(all, 0, CASES);
    }

    @Test
    void aCachedCaseWhoseBytesChangedInMemoryIsDetectedAndItsFileReadAgain() {
        DecodedFileCache decoded = new DecodedFileCache(DecodedFileCache.DEFAULT_MAX_CHARGED_BYTES);
        List<StoredCase> first = new ArrayList<>();
        DatasetReader.open(entry, recording, decoded).forEachCaseInRange(40, 5, first::add);
        first.get(2).caseJson()[3] ^= 0x01; // a caller broke the rule: the shared bytes changed

        recording.clear();
        List<StoredCase> again = new ArrayList<>();
        DatasetReader.open(entry, recording, decoded).forEachCaseInRange(40, 5, again::add);
        assertCases(again, 40, 5);
        assertThat(recording.caseFileReads()).hasSize(1); // the file was read and decoded again
        assertThat(decoded.stats().evictions()).isEqualTo(1);

        // The fresh decoding is retained in place of the damaged one.
        recording.clear();
        List<StoredCase> third = new ArrayList<>();
        DatasetReader.open(entry, recording, decoded).forEachCaseInRange(40, 5, third::add);
        assertCases(third, 40, 5);
        assertThat(recording.caseFileReads()).isEmpty();
    }

    @Test
    void aFileThatFailsItsCheckIsNeverRetained_andAZeroBoundRetainsNothing() throws IOException {
        DecodedFileCache decoded = new DecodedFileCache(DecodedFileCache.DEFAULT_MAX_CHARGED_BYTES);
        CaseFileSpan victim = reader().caseFilesInRange(50, 1).get(0);
        Path path = root.resolve(victim.ref().key().value());
        byte[] intact = Files.readAllBytes(path);
        byte[] bytes = intact.clone();
        bytes[bytes.length - 10] ^= 0x01;
        Files.write(path, bytes);
        for (int i = 0; i < 2; i++) {
            assertThatThrownBy(
                            () -> DatasetReader.open(entry, recording, decoded).forEachCaseInRange(50, 1, c -> {}))
                    .isInstanceOf(DatasetDamagedException.class);
        }
        assertThat(recording.caseFileReads())
                .containsExactly(victim.ref().key(), victim.ref().key());
        Files.write(path, intact);

        DecodedFileCache none = new DecodedFileCache(0);
        recording.clear();
        for (int i = 0; i < 2; i++) {
            List<StoredCase> got = new ArrayList<>();
            DatasetReader.open(entry, recording, none).forEachCaseInRange(50, 3, got::add);
            assertCases(got, 50, 3);
        }
        assertThat(recording.caseFileReads()).hasSize(2);
        assertThat(recording.indexReads()).hasSize(6);
        assertThat(none.stats().files()).isZero();
    }

    @Test
    void aReaderWithAnotherBindingIsRefused() {
        ObjectReader elsewhere = new ObjectReader() {
            @Override
            public StoreBinding binding() {
                return new StoreBinding("local:/elsewhere");
            }

            @Override
            public byte[] read(ObjectRef ref, Deadline deadline) {
                return store.read(ref, deadline);
            }
        };
        assertThatThrownBy(() -> DatasetReader.open(entry, elsewhere))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining(entry.storage().value());
    }

    private static Deadline soon() {
        return Deadline.after(Duration.ofSeconds(30));
    }

    /** Passes reads to the real store and records which keys were read. */
    private static final class RecordingReader implements ObjectReader {
        private final ObjectStore store;
        private final List<ObjectKey> reads = new CopyOnWriteArrayList<>();

        RecordingReader(ObjectStore store) {
            this.store = store;
        }

        @Override
        public StoreBinding binding() {
            return store.binding();
        }

        @Override
        public byte[] read(ObjectRef ref, Deadline deadline) {
            reads.add(ref.key());
            return store.read(ref, deadline);
        }

        List<ObjectKey> all() {
            return List.copyOf(reads);
        }

        List<ObjectKey> caseFileReads() {
            return reads.stream().filter(k -> k.startsWith("datasets/cases/")).toList();
        }

        List<ObjectKey> indexReads() {
            return reads.stream().filter(k -> k.startsWith("datasets/index/")).toList();
        }

        void clear() {
            reads.clear();
        }
    }
}
