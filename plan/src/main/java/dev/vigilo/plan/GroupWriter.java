package dev.vigilo.plan;

import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectConflictException;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectNotFoundException;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Writes plan files in bounded groups, in the order they are added (which is dependency order: callers add a file
 * only after everything it references). Per group: register ownership (one SQL transaction), then create and
 * byte-verify each file with no transaction open, then acknowledge (one SQL transaction) and advance the chunk
 * cursor across the consecutive chunk range. Keeps one group in memory. Not thread-safe.
 */
final class GroupWriter {
    static final int MAX_FILES = 64;
    static final int MAX_REFERENCE_BYTES = 256 * 1024;
    static final int MAX_PAYLOAD_BYTES = 8 * 1024 * 1024;
    /** Fixed per-reference metadata charge besides the key (length, digest, kind, chunk index). */
    private static final int REFERENCE_OVERHEAD = 96;

    private static final Duration TRANSFER = Duration.ofSeconds(120);
    private static final Duration WINDOW = Duration.ofSeconds(150);

    record Pending(ObjectRef ref, byte[] bytes, PlanFileKind kind, Long chunkIndex) {}

    private final ObjectStore store;
    private final Authority authority;
    private final PreparationOptions options;
    private final List<Pending> group = new ArrayList<>();
    private final int maxFiles;
    private int referenceBytes;
    private long payloadBytes;
    /** Chunks below this index are acknowledged (by this creator or an earlier one). */
    private long chunkPrefix;

    private long filesWritten;
    private long filesReverified;

    GroupWriter(ObjectStore store, Authority authority, PreparationOptions options) {
        this.store = store;
        this.authority = authority;
        this.options = options;
        this.maxFiles = Math.min(MAX_FILES, options.groupMaxFiles());
        // A resume replays from chunk 0 (re-verifying acknowledged files); the recorded cursor only moves forward.
        this.chunkPrefix = 0;
    }

    void add(Pending p) {
        int ref = p.ref().key().value().length() + REFERENCE_OVERHEAD;
        boolean fits = group.size() < maxFiles
                && referenceBytes + ref <= MAX_REFERENCE_BYTES
                && payloadBytes + p.bytes().length <= MAX_PAYLOAD_BYTES;
        if (!fits && !group.isEmpty()) {
            flush();
        }
        group.add(p);
        referenceBytes += ref;
        payloadBytes += p.bytes().length;
        if (p.bytes().length > MAX_PAYLOAD_BYTES) {
            flush(); // a single larger document admitted by its format goes alone
        }
    }

    void flush() {
        if (group.isEmpty()) {
            return;
        }
        Deadline window = Deadline.after(WINDOW); // minted before registration
        List<Authority.FileRow> rows = new ArrayList<>(group.size());
        for (Pending p : group) {
            rows.add(new Authority.FileRow(p.ref(), p.kind(), p.chunkIndex()));
        }
        Set<ObjectKey> acked = new HashSet<>(authority.register(rows));
        options.hooks().afterRegister(group.size());
        long started = System.nanoTime();
        List<ObjectKey> verified = new ArrayList<>();
        long prefix = chunkPrefix;
        for (Pending p : group) {
            Deadline transfer = earlier(window, Deadline.after(TRANSFER));
            if (!acked.contains(p.ref().key())) {
                try {
                    store.create(p.ref().key(), p.bytes(), transfer);
                } catch (ObjectConflictException e) {
                    throw PlanErrors.damaged(
                            authority.runId(),
                            "plan file " + p.ref().key()
                                    + " already exists with different bytes; the run's inputs changed, create a new run",
                            e);
                }
                filesWritten++;
            } else {
                filesReverified++;
            }
            verify(p.ref(), transfer);
            verified.add(p.ref().key());
            if (p.chunkIndex() != null && p.chunkIndex() == prefix) {
                prefix++;
            }
            if (System.nanoTime() - started >= options.checkpointInterval().toNanos()
                    && verified.size() < group.size()) {
                // Checkpoint only the verified prefix, and recheck authority before writing more.
                authority.acknowledge(verified, cursorIfAdvanced(prefix));
                chunkPrefix = prefix;
                verified.clear();
                options.hooks().afterCheckpoint(chunkPrefix);
                started = System.nanoTime();
                window = Deadline.after(WINDOW);
            }
        }
        authority.acknowledge(verified, cursorIfAdvanced(prefix));
        chunkPrefix = prefix;
        group.clear();
        referenceBytes = 0;
        payloadBytes = 0;
        options.hooks().afterAcknowledge(chunkPrefix);
    }

    private Optional<ChunkCursor> cursorIfAdvanced(long prefix) {
        return prefix > chunkPrefix ? Optional.of(new ChunkCursor(prefix)) : Optional.empty();
    }

    private void verify(ObjectRef ref, Deadline deadline) {
        try {
            store.read(ref, deadline);
        } catch (ObjectNotFoundException e) {
            throw PlanErrors.damaged(
                    authority.runId(),
                    "plan file " + ref.key() + " is missing from " + store.binding() + " although it was written",
                    e);
        } catch (ObjectIntegrityException e) {
            throw PlanErrors.damaged(
                    authority.runId(),
                    "plan file " + ref.key() + " failed verification: " + e.getMessage()
                            + "; the stored copy was altered, create a new run",
                    e);
        }
    }

    private static Deadline earlier(Deadline a, Deadline b) {
        return a.nanoTime() - b.nanoTime() <= 0 ? a : b;
    }

    long filesWritten() {
        return filesWritten;
    }

    long filesReverified() {
        return filesReverified;
    }
}
