package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.dataset.CaseFileSpan;
import dev.vigilo.dataset.CaseFold;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetDamagedException;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.StoredCase;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.storage.CachingObjectReader;
import dev.vigilo.storage.Deadline;
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
 * A worker's verified chunk reads over a real uploaded dataset in a local store: 2,100 cases in case files
 * [0, 1024), [1024, 2048) and [2048, 2100); chunk 10 holds ordinals 1000..1099 and so spans the first two files.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ChunkCasesTest {
    private static final int CASES = 2100;
    private static final long FIRST = 1000;
    private static final int SIZE = 100;
    /** Far below one case file: forces the verify-then-reread path. */
    private static final long TINY_BUDGET = 1000;

    private ControlDatabase control;
    private DatasetCatalog catalog;
    private ObjectStore store;
    private Path root;
    private DatasetEntry dataset;
    private List<String> events;
    private Recording recording;

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
    void upload() throws IOException {
        root = dir.resolve("objects-" + UUID.randomUUID());
        store = ObjectStores.open(new StoreSpec.Local("local", root));
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < CASES; i++) {
            lines.append(caseLine(i)).append('\n');
        }
        Path file = dir.resolve("chunked-" + UUID.randomUUID() + ".jsonl");
        Files.writeString(file, lines);
        dataset = catalog.upload(UploadRequest.of(file), store, UploadProgress.NONE);
        events = new CopyOnWriteArrayList<>();
        recording = new Recording(store, events);
    }

    @AfterEach
    void closeStore() {
        Thread.interrupted();
        store.close();
    }

    static String caseLine(int i) {
        return "{\"id\":\"case-" + i + "\",\"input\":{\"q\":\"question " + i + "\"},\"expected\":\"" + (i * 3) + "\"}";
    }

    private static ChunkMembership.Case truth(long ordinal) {
        return new ChunkMembership.Case(
                ordinal, "case-" + ordinal, Sha256.of(caseLine((int) ordinal).getBytes(StandardCharsets.UTF_8)));
    }

    /** A chunk listing {@code cases}, with the membership digest they fold to. */
    private static ChunkMembership chunk(List<ChunkMembership.Case> cases) {
        CaseFold fold = new CaseFold();
        cases.forEach(c -> fold.add(c.ordinal(), c.id(), c.sha256()));
        return new ChunkMembership(10, UUID.randomUUID(), cases, fold.finish());
    }

    private static List<ChunkMembership.Case> truthful(long first, int size) {
        List<ChunkMembership.Case> cases = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            cases.add(truth(first + i));
        }
        return cases;
    }

    private List<StoredCase> all(ChunkCases cases) {
        List<StoredCase> out = new ArrayList<>();
        cases.forEach(out::add);
        return out;
    }

    private static void assertChunkCases(List<StoredCase> cases, long first, int size) {
        assertThat(cases).hasSize(size);
        for (int i = 0; i < size; i++) {
            StoredCase c = cases.get(i);
            assertThat(c.ordinal()).isEqualTo(first + i);
            assertThat(c.id()).isEqualTo("case-" + (first + i));
            assertThat(new String(c.caseJson(), StandardCharsets.UTF_8)).isEqualTo(caseLine((int) (first + i)));
        }
    }

    private List<String> caseFileReads() {
        return events.stream().filter(e -> e.startsWith("read datasets/cases/")).toList();
    }

    @Test
    void aChunkWithinTheBudgetIsVerifiedOnceAndKeptResident() {
        DatasetReader reader = DatasetReader.open(dataset, recording);
        ChunkCases cases = ChunkCases.open(chunk(truthful(FIRST, SIZE)), reader, ChunkCases.DEFAULT_RESIDENT_BYTES);

        List<CaseFileSpan> files = DatasetReader.open(dataset, store).caseFilesInRange(FIRST, SIZE);
        assertThat(files).extracting(CaseFileSpan::firstOrdinal).containsExactly(0L, 1024L);
        assertThat(cases.files()).isEqualTo(files);
        assertThat(cases.encodedBytes())
                .isEqualTo(files.get(0).ref().length() + files.get(1).ref().length());
        assertThat(cases.resident()).isTrue();
        assertThat(caseFileReads()).hasSize(2);

        events.clear();
        assertChunkCases(all(cases), FIRST, SIZE);
        assertChunkCases(all(cases), FIRST, SIZE);
        assertThat(events).isEmpty();
    }

    @Test
    void aChunkOverTheBudgetIsVerifiedFirstThenRereadOneFileAtATime() {
        DatasetReader reader = DatasetReader.open(dataset, recording);
        ChunkCases cases = ChunkCases.open(chunk(truthful(FIRST, SIZE)), reader, TINY_BUDGET);
        assertThat(cases.resident()).isFalse();
        assertThat(caseFileReads()).hasSize(2);

        events.clear();
        cases.forEach(c -> events.add("case " + c.ordinal()));
        List<String> expected = new ArrayList<>();
        expected.add("read " + cases.files().get(0).ref().key());
        for (long o = FIRST; o < 1024; o++) {
            expected.add("case " + o);
        }
        expected.add("read " + cases.files().get(1).ref().key());
        for (long o = 1024; o < FIRST + SIZE; o++) {
            expected.add("case " + o);
        }
        assertThat(events).containsExactlyElementsOf(expected);

        List<StoredCase> again = new ArrayList<>();
        cases.forEach(again::add);
        assertChunkCases(again, FIRST, SIZE);
    }

    @Test
    void rereadsThroughTheWorkerCacheAreHitsAndSurviveTheStoreLosingTheFile() throws IOException {
        CachingObjectReader cache = new CachingObjectReader(store);
        DatasetReader reader = DatasetReader.open(dataset, cache);
        ChunkCases cases = ChunkCases.open(chunk(truthful(FIRST, SIZE)), reader, TINY_BUDGET);
        CachingObjectReader.Stats afterOpen = cache.stats();
        assertThat(afterOpen.misses()).isEqualTo(3); // the root index document and two case files

        for (CaseFileSpan f : cases.files()) {
            Files.delete(root.resolve(f.ref().key().value()));
        }
        assertChunkCases(all(cases), FIRST, SIZE);
        assertThat(cache.stats().misses()).isEqualTo(afterOpen.misses());
        assertThat(cache.stats().hits()).isEqualTo(afterOpen.hits() + 2);
    }

    @Test
    void aChunkEntryWhoseHashDiffersFromTheDatasetIsDamaged() {
        List<ChunkMembership.Case> listed = truthful(FIRST, SIZE);
        listed.set(50, new ChunkMembership.Case(1050, "case-1050", Sha256.of(new byte[] {1})));
        for (long budget : new long[] {ChunkCases.DEFAULT_RESIDENT_BYTES, TINY_BUDGET}) {
            assertThatThrownBy(() -> ChunkCases.open(chunk(listed), DatasetReader.open(dataset, store), budget))
                    .isInstanceOf(DamagedException.class)
                    .hasMessageContaining("chunk 10 (")
                    .hasMessageContaining("case 1050 (\"case-1050\", SHA-256 " + Sha256.of(new byte[] {1}))
                    .hasMessageContaining(truth(1050).sha256().toHex());
        }

        List<ChunkMembership.Case> renamed = truthful(FIRST, SIZE);
        renamed.set(99, new ChunkMembership.Case(1099, "case-x", truth(1099).sha256()));
        assertThatThrownBy(() -> ChunkCases.open(chunk(renamed), DatasetReader.open(dataset, store), TINY_BUDGET))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("case 1099 (\"case-x\"");
    }

    @Test
    void aMembershipDigestTheCasesDoNotReproduceIsDamaged() {
        ChunkMembership wrong = new ChunkMembership(
                10,
                UUID.randomUUID(),
                truthful(FIRST, SIZE),
                chunk(truthful(FIRST + 1, SIZE)).membership());
        assertThatThrownBy(() -> ChunkCases.open(wrong, DatasetReader.open(dataset, store), TINY_BUDGET))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("chunk 10 (")
                .hasMessageContaining("membership digest is " + wrong.membership());
    }

    @Test
    void aTamperedCaseFileFailsBeforeAnyCaseIsHandedOut() throws IOException {
        CaseFileSpan second =
                DatasetReader.open(dataset, store).caseFilesInRange(FIRST, SIZE).get(1);
        tamper(second.ref());
        assertThatThrownBy(() -> ChunkCases.open(
                        chunk(truthful(FIRST, SIZE)),
                        DatasetReader.open(dataset, store),
                        ChunkCases.DEFAULT_RESIDENT_BYTES))
                .isInstanceOf(DatasetDamagedException.class)
                .satisfies(e -> assertThat(((DatasetDamagedException) e).key())
                        .isEqualTo(second.ref().key()));
    }

    @Test
    void aFileTamperedAfterVerificationFailsItsRereadBeforeItsCasesArePassedOn() throws IOException {
        ChunkCases cases =
                ChunkCases.open(chunk(truthful(FIRST, SIZE)), DatasetReader.open(dataset, store), TINY_BUDGET);
        tamper(cases.files().get(1).ref());
        List<StoredCase> passed = new ArrayList<>();
        assertThatThrownBy(() -> cases.forEach(passed::add))
                .isInstanceOf(DatasetDamagedException.class)
                .satisfies(e -> assertThat(((DatasetDamagedException) e).key())
                        .isEqualTo(cases.files().get(1).ref().key()));
        assertChunkCases(passed, FIRST, 24); // only the cases of the intact first file
    }

    @Test
    void aChunkBeyondTheDatasetIsDamagedAndStorageFailuresPropagate() {
        assertThatThrownBy(() ->
                        ChunkCases.open(chunk(truthful(2050, SIZE)), DatasetReader.open(dataset, store), TINY_BUDGET))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("[2050, 2150)")
                .hasMessageContaining("holds 2100 cases");

        Thread.currentThread().interrupt();
        assertThatThrownBy(() ->
                        ChunkCases.open(chunk(truthful(FIRST, SIZE)), DatasetReader.open(dataset, store), TINY_BUDGET))
                .isInstanceOf(CancelledException.class);
        assertThat(Thread.interrupted()).isTrue();
    }

    @Test
    void aChunkListsOneToOneHundredConsecutiveCases() {
        assertThatThrownBy(() -> chunk(List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> chunk(truthful(0, SIZE + 1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> chunk(List.of(truth(4), truth(6)))).isInstanceOf(IllegalArgumentException.class);
        assertChunkCases(
                all(ChunkCases.open(chunk(truthful(CASES - 1, 1)), DatasetReader.open(dataset, store), 0)),
                CASES - 1,
                1);
    }

    private void tamper(ObjectRef ref) throws IOException {
        Path file = root.resolve(ref.key().value());
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length / 2] ^= 0x01;
        Files.write(file, bytes);
    }

    /** Passes reads to the real store and records each in the shared event list. */
    private static final class Recording implements ObjectReader {
        private final ObjectStore store;
        private final List<String> events;

        Recording(ObjectStore store, List<String> events) {
            this.store = store;
            this.events = events;
        }

        @Override
        public StoreBinding binding() {
            return store.binding();
        }

        @Override
        public byte[] read(ObjectRef ref, Deadline deadline) {
            events.add("read " + ref.key());
            return store.read(ref, deadline);
        }
    }
}
