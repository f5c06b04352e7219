package dev.vigilo.exec.record;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.sessionlog.Epoch;
import dev.vigilo.sessionlog.SessionHeader;
import dev.vigilo.sessionlog.SessionLogEncoder;
import dev.vigilo.sessionlog.WriterOptions;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * Writes transcripts (docs/transcripts.md): each attempt's events are encoded as a session log by the session-log
 * writer's encoder ({@link SessionLogEncoder}: the writer's exact bytes, in memory) under the chunk's lease generation
 * as its writer epoch (P1 commit records, so every batch names the generation). A worker appends it to its chunk's
 * transcript container ({@link #containerKey}, receipt version 8; the worker's {@code TranscriptContainers}), or, on
 * the path of receipt versions 2-7, creates it as an immutable object under a key that names the run, chunk, case
 * ordinal, attempt and lease generation ({@link #write}). Objects are create-only, so a transcript can be neither
 * extended nor replaced; it counts only once a fenced receipt references it.
 *
 * <p>The object store's create is the durability point: a transcript is written once, whole, so a local log file and
 * its fsyncs would only add cost. Stateless and thread-safe.
 */
public final class TranscriptStore {
    /** P1 commit records (the epoch is in the object), no sidecar manifest, chunk runs packed as the writer does. */
    public static final WriterOptions OPTIONS = new WriterOptions(true, false, false, true);
    /** Events per batch (one zstd frame each). */
    public static final int BATCH_EVENTS = 256;

    private static final Duration WRITE = Duration.ofSeconds(120);

    /** The object key of a transcript: {@code runs/<run>/transcripts/<chunk, 10 digits>/<ordinal>-a<attempt>-g<gen>.jsonl.zstd}. */
    public static ObjectKey key(UUID runId, long chunkIndex, long ordinal, int attempt, long generation) {
        return key(runId, chunkIndex, ordinal, 0, attempt, generation);
    }

    /**
     * The object key of a transcript of epoch {@code epoch} (1-based) in a run of several epochs:
     * {@code .../<ordinal>-e<epoch>-a<attempt>-g<gen>.jsonl.zstd}; epoch 0 means a run of one epoch, whose keys name
     * none.
     */
    public static ObjectKey key(UUID runId, long chunkIndex, long ordinal, int epoch, int attempt, long generation) {
        return ObjectKey.of("runs/" + runId + "/transcripts/" + ObjectKey.zeroPadded(chunkIndex, 10) + "/"
                + caseName(ordinal, epoch, attempt, generation) + ".jsonl.zstd");
    }

    /**
     * The object key of a transcript container (receipt version 8, docs/formats/transcript.md): the {@code sequence}th
     * (from 1) container of the transcripts of chunk {@code chunkIndex} executed under lease generation {@code
     * generation}: {@code runs/<run>/transcripts/<chunk, 10 digits>/g<gen>-c<sequence>.jsonl.zstd}. A stale holder
     * writes under its own generation, so containers of two holders never share a key.
     */
    public static ObjectKey containerKey(UUID runId, long chunkIndex, long generation, int sequence) {
        return ObjectKey.of(containerPrefix(runId, chunkIndex, generation) + sequence + ".jsonl.zstd");
    }

    /** Whether {@code key} names a container of chunk {@code chunkIndex}'s transcripts of lease generation {@code generation}. */
    public static boolean isContainerKey(ObjectKey key, UUID runId, long chunkIndex, long generation) {
        String prefix = containerPrefix(runId, chunkIndex, generation);
        String k = key.value();
        if (!k.startsWith(prefix) || !k.endsWith(".jsonl.zstd")) {
            return false;
        }
        String sequence = k.substring(prefix.length(), k.length() - ".jsonl.zstd".length());
        return sequence.matches("[1-9][0-9]{0,9}");
    }

    private static String containerPrefix(UUID runId, long chunkIndex, long generation) {
        return "runs/" + runId + "/transcripts/" + ObjectKey.zeroPadded(chunkIndex, 10) + "/g" + generation + "-c";
    }

    /** The session id in a transcript's header: names the same things as its key (epoch 0: a run of one epoch). */
    public static String sessionId(UUID runId, long chunkIndex, long ordinal, int epoch, int attempt, long generation) {
        return "vigilo-run-" + runId + "-chunk-" + chunkIndex + "-case-"
                + caseName(ordinal, epoch, attempt, generation);
    }

    private static String caseName(long ordinal, int epoch, int attempt, long generation) {
        return ordinal + (epoch > 0 ? "-e" + epoch : "") + "-a" + attempt + "-g" + generation;
    }

    /** The session log of {@code events} under writer epoch {@code generation}: one transcript's bytes. */
    public static byte[] encode(SessionHeader header, long generation, List<ObjectNode> events) {
        SessionLogEncoder log = new SessionLogEncoder(header, new Epoch(generation), OPTIONS);
        for (int from = 0; from < events.size(); from += BATCH_EVENTS) {
            log.append(events.subList(from, Math.min(events.size(), from + BATCH_EVENTS)));
        }
        return log.toByteArray();
    }

    /**
     * An encoder of one transcript under writer epoch {@code generation} that takes the events as they are recorded
     * ({@link SessionLogEncoder#add}) and gives, at the end, {@link #encode}'s bytes for the same events: the worker
     * keeps an attempt's events as JSON lines while its call is in flight, not as trees.
     */
    public static SessionLogEncoder encoder(SessionHeader header, long generation) {
        return new SessionLogEncoder(header, new Epoch(generation), OPTIONS, BATCH_EVENTS);
    }

    /**
     * Encodes {@code events} as a session log with epoch {@code generation} and creates it at {@code key}.
     *
     * @return the created object's reference
     * @throws UnavailableException when the store fails
     * @throws dev.vigilo.storage.ObjectConflictException when {@code key} already holds other bytes
     */
    public ObjectRef write(
            ObjectStore store, ObjectKey key, SessionHeader header, long generation, List<ObjectNode> events) {
        return write(store, key, encode(header, generation, events));
    }

    /**
     * Creates the encoded transcript {@code bytes} (from {@link #encoder} or {@link #encode}) at {@code key}.
     *
     * @return the created object's reference
     * @throws UnavailableException when the store fails
     * @throws dev.vigilo.storage.ObjectConflictException when {@code key} already holds other bytes
     */
    public ObjectRef write(ObjectStore store, ObjectKey key, byte[] bytes) {
        return store.create(key, bytes, Deadline.after(WRITE));
    }
}
