package dev.vigilo.sessionlog;

import java.util.Objects;

/**
 * The high watermark of a session log: the last committed event and the byte offset where the committed
 * prefix of the file ends (the end of the frame that carries the commit). Everything after it is uncommitted.
 *
 * @param lastSeq    seq of the last committed stored event; empty-log watermarks use {@link #EMPTY_SEQ}
 * @param byteOffset file offset just past the last committed frame (>= 0)
 */
public record HighWatermark(long lastSeq, long byteOffset) implements Comparable<HighWatermark> {
    /** lastSeq of a log whose committed region holds no event. */
    public static final long EMPTY_SEQ = -1;

    public HighWatermark {
        if (lastSeq < EMPTY_SEQ) {
            throw new IllegalArgumentException("lastSeq must be >= -1, got " + lastSeq);
        }
        if (byteOffset < 0) {
            throw new IllegalArgumentException("byteOffset must be >= 0, got " + byteOffset);
        }
    }

    /** Ordered by byte offset (the committed prefix), then seq. */
    @Override
    public int compareTo(HighWatermark o) {
        Objects.requireNonNull(o, "o");
        int c = Long.compare(byteOffset, o.byteOffset);
        return c != 0 ? c : Long.compare(lastSeq, o.lastSeq);
    }
}
