package dev.vigilo.exec.worker;

import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.TranscriptStore;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.Sha256;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transcript containers of one held chunk (docs/transcripts.md, "Containers"; receipt version 8): finished
 * attempts' transcripts (each a whole session log, encoded) are appended back to back to the chunk's current
 * container, and each gets its slice's reference (key, offset, length, SHA-256) at once; the container is sealed and
 * created as one object by {@link #flush}, which the partial receipt writer calls right before a link (whose entries'
 * slices are all in sealed containers then) and the execution before it returns the final receipt. A container that
 * reaches {@link #SEAL_BYTES} is sealed and written by the thread that filled it.
 *
 * <p>A container whose create fails stays buffered and is created again by the next flush (a retried create of the
 * same bytes succeeds: objects are create-only and idempotent), so a link that failed loses no transcript the final
 * receipt needs; the final flush throws when it still cannot write, failing the chunk as a failed transcript write
 * always did. Memory: the compressed transcripts not yet written, at most one chunk's (the chunk file's case count
 * times the attempts per case, each transcript bounded by the agent protocol's limits); with partial receipts, about
 * one link's ({@value PartialWriter#BATCH} cases) plus the cases in flight. Thread-safe.
 */
final class TranscriptContainers {
    private static final Logger LOG = LoggerFactory.getLogger(TranscriptContainers.class);
    /** A container is sealed and written once it holds this many bytes (1 MiB): bounds memory and each read. */
    static final int SEAL_BYTES = 1 << 20;

    private static final Duration WRITE = Duration.ofSeconds(120);

    /** A sealed container, not yet created. */
    private record Sealed(ObjectKey key, byte[] bytes) {}

    private final ObjectStore store;
    private final UUID runId;
    private final long chunkIndex;
    private final long generation;

    private final Object lock = new Object();
    /** The open container's bytes and its 1-based sequence. */
    private ByteArrayOutputStream current = new ByteArrayOutputStream();

    private int sequence = 1;
    /** Sealed containers not created yet, oldest first. */
    private final ArrayDeque<Sealed> unwritten = new ArrayDeque<>();
    /** Held while creating containers: one writer at a time, in sequence order. */
    private final Object writing = new Object();

    TranscriptContainers(ObjectStore store, UUID runId, long chunkIndex, long generation) {
        this.store = Objects.requireNonNull(store, "store");
        this.runId = Objects.requireNonNull(runId, "runId");
        this.chunkIndex = chunkIndex;
        this.generation = generation;
    }

    /**
     * Appends one attempt's transcript ({@code transcript}: a whole session log) to the open container.
     *
     * @return the slice's reference, valid once a {@link #flush} after this call returned
     */
    Receipt.TranscriptRef add(int attempt, byte[] transcript) {
        Sha256 sha = Sha256.of(transcript);
        ObjectKey key;
        long offset;
        boolean full;
        synchronized (lock) {
            key = TranscriptStore.containerKey(runId, chunkIndex, generation, sequence);
            offset = current.size();
            current.writeBytes(transcript);
            full = current.size() >= SEAL_BYTES;
            if (full) {
                seal();
            }
        }
        if (full) {
            try {
                writeSealed();
            } catch (RuntimeException e) {
                // Kept: the next flush (a link's, or the final receipt's) creates it again.
                LOG.warn(
                        "chunk {} of run {}: cannot write a full transcript container yet ({}); it stays buffered",
                        chunkIndex,
                        runId,
                        e.getMessage());
            }
        }
        return Receipt.TranscriptRef.slice(attempt, new ObjectRef(key, transcript.length, sha), offset);
    }

    /**
     * Seals the open container (when it holds anything) and creates every sealed container not created yet: after
     * it returns, every slice {@link #add} returned before the call is readable.
     *
     * @throws dev.vigilo.common.errors.UnavailableException when the store fails (the containers stay buffered)
     * @throws dev.vigilo.storage.ObjectConflictException when a key holds other bytes (the records were altered)
     */
    void flush() {
        synchronized (lock) {
            if (current.size() > 0) {
                seal();
            }
        }
        writeSealed();
    }

    /** Bytes appended or sealed and not created yet (for tests and the memory bound). */
    long buffered() {
        synchronized (lock) {
            long n = current.size();
            for (Sealed s : unwritten) {
                n += s.bytes().length;
            }
            return n;
        }
    }

    /** Moves the open container to the unwritten ones and opens the next; the caller holds the lock. */
    private void seal() {
        unwritten.addLast(new Sealed(
                TranscriptStore.containerKey(runId, chunkIndex, generation, sequence), current.toByteArray()));
        current = new ByteArrayOutputStream();
        sequence++;
    }

    private void writeSealed() {
        synchronized (writing) {
            while (true) {
                Sealed next;
                synchronized (lock) {
                    next = unwritten.peekFirst();
                }
                if (next == null) {
                    return;
                }
                store.create(next.key(), next.bytes(), Deadline.after(WRITE));
                synchronized (lock) {
                    unwritten.removeFirst();
                }
            }
        }
    }
}
