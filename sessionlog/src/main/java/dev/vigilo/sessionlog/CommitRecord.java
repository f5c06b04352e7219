package dev.vigilo.sessionlog;

import java.util.Objects;

/**
 * The P1 commit record: the last line of every batch frame a Vigilo writer appends. It is stored as an event
 * of type {@value #TYPE} with {@code "ignorable":true}, so the published reader (which refuses unknown types
 * unless ignorable) still accepts the log. Its own seq is {@code endSeq}: the last seq of the batch.
 * See docs/formats/session-log.md.
 *
 * @param epoch  epoch of the writer that appended the batch
 * @param endSeq seq of this record, the last seq of its batch
 */
public record CommitRecord(Epoch epoch, Seq endSeq) {
    /** The event type that carries commit records. */
    public static final String TYPE = "vigilo/commit";
    /** Version of the commit record's data object. */
    public static final int VERSION = 1;

    public CommitRecord {
        Objects.requireNonNull(epoch, "epoch");
        Objects.requireNonNull(endSeq, "endSeq");
    }
}
