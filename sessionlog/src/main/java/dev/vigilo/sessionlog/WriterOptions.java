package dev.vigilo.sessionlog;

import java.util.Objects;

/**
 * How a {@link SessionLogWriter} publishes commits.
 *
 * @param commitRecords P1: end every batch with a {@link CommitRecord}
 * @param manifest      P2: replace the sidecar {@link Manifest} after every durable batch
 * @param groupCommit   concurrent appenders share one batch and one fsync (false: one batch + fsync per append)
 * @param packChunks    pack runs of >= 3 assistant/chunk deltas within a batch into {@code *-chunks} storage rows,
 *                      like the published writer (its default, {@code packChunks: true}); false writes every
 *                      event as its own line (the published writer with {@code packChunks: false})
 * @param compression   the encoding of a log the writer creates: {@link Compression#ZSTD} (one zstd frame per
 *                      batch, {@code session.jsonl.zstd}) or {@link Compression#NONE} (plain lines,
 *                      {@code session.jsonl}); a log opened for appending keeps its own encoding
 */
public record WriterOptions(
        boolean commitRecords, boolean manifest, boolean groupCommit, boolean packChunks, Compression compression) {
    public WriterOptions {
        Objects.requireNonNull(compression, "compression");
    }

    /** As the five-argument form, writing zstd frames. */
    public WriterOptions(boolean commitRecords, boolean manifest, boolean groupCommit, boolean packChunks) {
        this(commitRecords, manifest, groupCommit, packChunks, Compression.ZSTD);
    }

    /** As the five-argument form, packing chunk runs (the published writer's default) into zstd frames. */
    public WriterOptions(boolean commitRecords, boolean manifest, boolean groupCommit) {
        this(commitRecords, manifest, groupCommit, true);
    }

    /** P1 + P2 + group commit, chunk runs packed, zstd frames. */
    public static WriterOptions defaults() {
        return new WriterOptions(true, true, true, true);
    }

    /** No protocol metadata, chunk runs packed: the bytes the published writer produces (still fsynced, group committed). */
    public static WriterOptions plain() {
        return new WriterOptions(false, false, true, true);
    }

    /** @return these options with chunk packing switched on or off */
    public WriterOptions withPackChunks(boolean pack) {
        return new WriterOptions(commitRecords, manifest, groupCommit, pack, compression);
    }

    /** @return these options creating logs in {@code c} */
    public WriterOptions withCompression(Compression c) {
        return new WriterOptions(commitRecords, manifest, groupCommit, packChunks, c);
    }
}
