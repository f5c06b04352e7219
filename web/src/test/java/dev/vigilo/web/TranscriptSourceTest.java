package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StoreSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A transcript read from a file and from an immutable store object gives the same page; altered bytes are refused. */
class TranscriptSourceTest {
    @TempDir
    Path dir;

    @Test
    void anObjectReadsLikeItsFileAndLeavesNoTemporaryCopy() throws Exception {
        Path log = QuickstartState.writeSessionLog(dir.resolve("s/session.jsonl.zstd"));
        Transcript.Page fromFile;
        try (TranscriptSource.Opened o = TranscriptSource.file(log).open()) {
            fromFile = Transcript.read(o.file(), 0, 200);
        }
        try (ObjectStore store = ObjectStores.open(new StoreSpec.Local("t", dir.resolve("objects")))) {
            ObjectRef ref = store.create(
                    ObjectKey.of("runs/r/transcripts/0.jsonl.zstd"),
                    Files.readAllBytes(log),
                    Deadline.after(Duration.ofSeconds(10)));
            TranscriptSource source = TranscriptSource.object(store, ref);
            assertThat(source.name()).isEqualTo("runs/r/transcripts/0.jsonl.zstd");
            Path copy;
            Transcript.Page fromObject;
            try (TranscriptSource.Opened o = source.open()) {
                copy = o.file();
                fromObject = Transcript.read(copy, 0, 200);
            }
            assertThat(Files.exists(copy)).isFalse();
            // The object is the log alone (no sidecar manifest), so its commit records decide (channel p1): the
            // same verdict, events and high watermark.
            assertThat(fromObject.report().verdict())
                    .isEqualTo(fromFile.report().verdict());
            assertThat(fromObject.report().stored()).isEqualTo(fromFile.report().stored());
            assertThat(fromObject.report().hwSeq()).isEqualTo(fromFile.report().hwSeq());
            assertThat(fromObject.report().tornOffset())
                    .isEqualTo(fromFile.report().tornOffset());
            assertThat(fromObject.events()).hasSameSizeAs(fromFile.events());
            for (int i = 0; i < fromFile.events().size(); i++) {
                assertThat(fromObject.events().get(i).json())
                        .isEqualTo(fromFile.events().get(i).json());
            }
            // Bytes that differ from the reference are never shown.
            Path stored = dir.resolve("objects").resolve(ref.key().value());
            byte[] b = Files.readAllBytes(stored);
            b[b.length / 2] ^= 1;
            stored.toFile().setWritable(true);
            Files.write(stored, b);
            assertThatThrownBy(source::open).isInstanceOf(ObjectIntegrityException.class);
        }
    }

    @Test
    void pagesAreBoundedAndOversizedEventsAreKeptCut() throws Exception {
        Path log = QuickstartState.writeSessionLog(dir.resolve("s/session.jsonl.zstd"));
        Transcript.Page all = Transcript.read(log, 0, 1000);
        assertThat(all.nextFrom()).isEmpty();
        Transcript.Page first = Transcript.read(log, 0, 3);
        assertThat(first.events()).hasSize(3);
        assertThat(first.nextFrom()).hasValue(first.events().get(2).seq() + 1);
        assertThat(first.events()).allMatch(e -> e.json() != null && e.cut() == null);
    }
}
