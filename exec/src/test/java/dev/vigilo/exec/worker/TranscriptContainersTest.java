package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.TranscriptStore;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectInfo;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StoreBinding;
import dev.vigilo.storage.StoreSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A chunk's transcript containers over a real local store: slices back to back, created at a flush, kept and created
 * again when the store fails, sealed early when full.
 */
class TranscriptContainersTest {
    private static final UUID RUN = UUID.fromString("00000000-0000-0000-0000-000000000027");

    @TempDir
    Path dir;

    private ObjectStore local;
    private Outage store;

    @BeforeEach
    void open() {
        local = ObjectStores.open(new StoreSpec.Local("local", dir));
        store = new Outage(local);
    }

    @AfterEach
    void close() {
        local.close();
    }

    @Test
    void slicesAreBackToBackAndReadableAfterTheFlush() {
        TranscriptContainers c = new TranscriptContainers(store, RUN, 7, 3);
        Receipt.TranscriptRef a = c.add(1, bytes("first transcript"));
        Receipt.TranscriptRef b = c.add(2, bytes("second"));
        assertThat(a.offset()).hasValue(0);
        assertThat(b.offset()).hasValue(16);
        assertThat(a.ref().key()).isEqualTo(TranscriptStore.containerKey(RUN, 7, 3, 1));
        assertThat(a.ref().key().value()).isEqualTo("runs/" + RUN + "/transcripts/0000000007/g3-c1.jsonl.zstd");
        assertThat(TranscriptStore.isContainerKey(a.ref().key(), RUN, 7, 3)).isTrue();
        assertThat(TranscriptStore.isContainerKey(a.ref().key(), RUN, 7, 2)).isFalse();
        assertThat(local.head(a.ref().key(), soon())).isEmpty(); // nothing created before the flush
        c.flush();
        assertThat(c.buffered()).isZero();
        assertThat(read(a)).isEqualTo("first transcript");
        assertThat(read(b)).isEqualTo("second");
        // the next slices go to the next container; a flush with nothing open creates nothing
        Receipt.TranscriptRef next = c.add(1, bytes("third"));
        assertThat(next.ref().key()).isEqualTo(TranscriptStore.containerKey(RUN, 7, 3, 2));
        assertThat(next.offset()).hasValue(0);
        c.flush();
        c.flush();
        assertThat(local.list("runs/" + RUN + "/transcripts/", soon())).hasSize(2);
        assertThat(read(next)).isEqualTo("third");
    }

    @Test
    void aContainerTheStoreFailedToCreateIsKeptAndCreatedByTheNextFlush() {
        TranscriptContainers c = new TranscriptContainers(store, RUN, 1, 1);
        Receipt.TranscriptRef a = c.add(1, bytes("before the outage"));
        store.failing = true;
        assertThatThrownBy(c::flush).isInstanceOf(UnavailableException.class);
        assertThat(c.buffered()).isEqualTo(17); // kept, not lost
        Receipt.TranscriptRef b = c.add(1, bytes("during it"));
        store.failing = false;
        c.flush(); // the kept container first, then the one opened since
        assertThat(c.buffered()).isZero();
        assertThat(read(a)).isEqualTo("before the outage");
        assertThat(read(b)).isEqualTo("during it");
        assertThat(b.ref().key()).isEqualTo(TranscriptStore.containerKey(RUN, 1, 1, 2));
    }

    @Test
    void aCreateThatSucceededButReportedAFailureIsRepeatedWithTheSameBytes() {
        TranscriptContainers c = new TranscriptContainers(store, RUN, 1, 1);
        Receipt.TranscriptRef a = c.add(1, bytes("written, then a timeout"));
        store.failAfterCreate = true;
        assertThatThrownBy(c::flush).isInstanceOf(UnavailableException.class);
        assertThat(local.head(a.ref().key(), soon())).isPresent();
        store.failAfterCreate = false;
        c.flush(); // the same bytes at the same key: an idempotent create
        assertThat(read(a)).isEqualTo("written, then a timeout");
    }

    @Test
    void aFullContainerIsCreatedAtOnceByTheThreadThatFilledIt() {
        TranscriptContainers c = new TranscriptContainers(store, RUN, 2, 1);
        byte[] big = new byte[TranscriptContainers.SEAL_BYTES - 10];
        Receipt.TranscriptRef a = c.add(1, big);
        assertThat(local.head(a.ref().key(), soon())).isEmpty();
        Receipt.TranscriptRef b = c.add(1, bytes("and fills it")); // 12 bytes: past 1 MiB
        assertThat(local.head(a.ref().key(), soon())).isPresent(); // sealed at 1 MiB, no flush needed
        assertThat(b.ref().key()).isEqualTo(a.ref().key());
        assertThat(read(b)).isEqualTo("and fills it");
        assertThat(c.add(1, bytes("next")).ref().key()).isEqualTo(TranscriptStore.containerKey(RUN, 2, 1, 2));
        assertThat(c.buffered()).isEqualTo(4);
    }

    private String read(Receipt.TranscriptRef t) {
        return new String(ChunkRows.readTranscript(local, t, "transcript"), StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Deadline soon() {
        return Deadline.after(java.time.Duration.ofSeconds(10));
    }

    /** The real local store, whose creates fail on demand: before writing, or after writing (a lost answer). */
    private static final class Outage implements ObjectStore {
        private final ObjectStore store;
        volatile boolean failing;
        volatile boolean failAfterCreate;

        Outage(ObjectStore store) {
            this.store = store;
        }

        @Override
        public StoreBinding binding() {
            return store.binding();
        }

        @Override
        public ObjectRef create(ObjectKey key, byte[] bytes, Deadline deadline) {
            if (failing) {
                throw new UnavailableException("store unreachable (test)");
            }
            ObjectRef ref = store.create(key, bytes, deadline);
            if (failAfterCreate) {
                throw new UnavailableException("timed out waiting for the answer (test)");
            }
            return ref;
        }

        @Override
        public byte[] read(ObjectRef ref, Deadline deadline) {
            return store.read(ref, deadline);
        }

        @Override
        public Optional<ObjectInfo> head(ObjectKey key, Deadline deadline) {
            return store.head(key, deadline);
        }

        @Override
        public List<ObjectInfo> list(String prefix, Deadline deadline) {
            return store.list(prefix, deadline);
        }

        @Override
        public void close() {}
    }
}
