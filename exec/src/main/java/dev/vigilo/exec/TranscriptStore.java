package dev.vigilo.exec;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.sessionlog.Epoch;
import dev.vigilo.sessionlog.EpochSource;
import dev.vigilo.sessionlog.SessionHeader;
import dev.vigilo.sessionlog.SessionLogWriter;
import dev.vigilo.sessionlog.WriterOptions;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * Writes transcripts (docs/transcripts.md): each attempt's events go into a local session log written by the
 * session-log writer under the chunk's lease generation as its epoch (P1 commit records, so every batch names the
 * generation), closed committed, then created as an immutable object under a key that names the run, chunk, case
 * ordinal, attempt and lease generation. The local file is removed afterwards. Objects are create-only, so a
 * transcript can be neither extended nor replaced; it counts only once a fenced receipt references it.
 *
 * <p>Thread-safe: every call uses its own file in the scratch directory.
 */
final class TranscriptStore {
    /** P1 commit records (the epoch is in the object), no sidecar manifest (it would not be uploaded). */
    static final WriterOptions OPTIONS = new WriterOptions(true, false, false, false);
    /** Events per appended batch (one zstd frame each). */
    static final int BATCH_EVENTS = 256;

    private static final Duration WRITE = Duration.ofSeconds(120);

    private final Path scratch;

    /** @param scratch an existing directory for the local logs (files are removed after upload) */
    TranscriptStore(Path scratch) {
        this.scratch = Objects.requireNonNull(scratch, "scratch");
    }

    /** The object key of a transcript: {@code runs/<run>/transcripts/<chunk, 10 digits>/<ordinal>-a<attempt>-g<gen>.jsonl.zstd}. */
    static ObjectKey key(UUID runId, long chunkIndex, long ordinal, int attempt, long generation) {
        return ObjectKey.of("runs/" + runId + "/transcripts/" + String.format("%010d", chunkIndex) + "/" + ordinal
                + "-a" + attempt + "-g" + generation + ".jsonl.zstd");
    }

    /** The session id in a transcript's header: names the same things as its key. */
    static String sessionId(UUID runId, long chunkIndex, long ordinal, int attempt, long generation) {
        return "vigilo-run-" + runId + "-chunk-" + chunkIndex + "-case-" + ordinal + "-a" + attempt + "-g" + generation;
    }

    /**
     * Writes {@code events} as a session log with epoch {@code generation} and creates it at {@code key}.
     *
     * @return the created object's reference
     * @throws UnavailableException when the scratch directory or the store fails
     * @throws dev.vigilo.storage.ObjectConflictException when {@code key} already holds other bytes
     */
    ObjectRef write(ObjectStore store, ObjectKey key, SessionHeader header, long generation, List<ObjectNode> events) {
        Path file = scratch.resolve(UUID.randomUUID() + ".jsonl.zstd");
        try {
            try (SessionLogWriter w =
                    SessionLogWriter.create(file, header, EpochSource.fixed(new Epoch(generation)), OPTIONS)) {
                for (int from = 0; from < events.size(); from += BATCH_EVENTS) {
                    w.append(events.subList(from, Math.min(events.size(), from + BATCH_EVENTS)));
                }
            }
            byte[] bytes = Files.readAllBytes(file);
            return store.create(key, bytes, Deadline.after(WRITE));
        } catch (IOException e) {
            throw new UnavailableException(
                    "cannot read the transcript written to " + file + ": " + e.getMessage()
                            + "; check the worker's scratch directory",
                    e);
        } finally {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // a leftover local copy harms nothing: the object is what counts
            }
        }
    }
}
