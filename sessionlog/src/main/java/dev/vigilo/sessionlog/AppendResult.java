package dev.vigilo.sessionlog;

import java.util.Objects;

/**
 * A durable append: the seqs given to the caller's events and the high watermark after the batch that
 * carried them (which may also hold other appenders' events under group commit).
 *
 * @param firstSeq seq of the caller's first event
 * @param lastSeq  seq of the caller's last event
 * @param hw       watermark after the shared batch, commit record included
 */
public record AppendResult(Seq firstSeq, Seq lastSeq, HighWatermark hw) {
    public AppendResult {
        Objects.requireNonNull(firstSeq, "firstSeq");
        Objects.requireNonNull(lastSeq, "lastSeq");
        Objects.requireNonNull(hw, "hw");
    }
}
