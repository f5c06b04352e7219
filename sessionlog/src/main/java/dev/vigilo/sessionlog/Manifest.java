package dev.vigilo.sessionlog;

import java.util.List;
import java.util.Objects;

/**
 * The P2 sidecar manifest {@code <log>.meta}: what the writer durably committed, replaced by atomic rename
 * after each batch is fsynced. Format (version {@value #VERSION}) in docs/formats/session-log.md.
 *
 * @param epoch             epoch of the writer that wrote this manifest
 * @param endSeq            last committed seq ({@link HighWatermark#EMPTY_SEQ} when no event is committed)
 * @param frames            number of zstd frames in the committed prefix, header frame included (>= 1)
 * @param committedBytes    length of the committed prefix of the log file
 * @param lastFrameChecksum the 4-byte content checksum trailer of the last committed frame (unsigned), or -1
 * @param epochs            epoch history, ascending: the byte offset and seq where each epoch's first batch starts
 */
public record Manifest(
        Epoch epoch, long endSeq, long frames, long committedBytes, long lastFrameChecksum, List<EpochStart> epochs) {
    /** Manifest format version written and read by this build. */
    public static final int VERSION = 1;
    /** Value of the manifest's "format" field. */
    public static final String FORMAT = "vigilo-session-manifest";

    public Manifest {
        Objects.requireNonNull(epoch, "epoch");
        epochs = List.copyOf(Objects.requireNonNull(epochs, "epochs"));
        if (frames < 1 || committedBytes < 0 || endSeq < -1) {
            throw new IllegalArgumentException("invalid manifest counts");
        }
    }

    /**
     * One epoch-history entry (like Kafka's leader-epoch checkpoint).
     *
     * @param epoch       the epoch
     * @param startOffset byte offset of the first frame appended under it
     * @param startSeq    first seq of that frame
     */
    public record EpochStart(Epoch epoch, long startOffset, long startSeq) {
        public EpochStart {
            Objects.requireNonNull(epoch, "epoch");
        }
    }

    /** @return the sidecar path of a log file: the log's name plus ".meta" */
    public static java.nio.file.Path pathFor(java.nio.file.Path log) {
        return log.resolveSibling(log.getFileName().toString() + ".meta");
    }

    /** @return the epoch that owns the frame starting at {@code offset} per the history, or null */
    Epoch epochAt(long offset) {
        Epoch e = null;
        for (EpochStart s : epochs) {
            if (s.startOffset() <= offset) {
                e = s.epoch();
            }
        }
        return e;
    }
}
