package dev.vigilo.sessionlog;

/**
 * How a {@link SessionLogWriter} publishes commits.
 *
 * @param commitRecords P1: end every batch frame with a {@link CommitRecord}
 * @param manifest      P2: replace the sidecar {@link Manifest} after every durable batch
 * @param groupCommit   concurrent appenders share one frame and one fsync (false: one frame + fsync per append)
 * @param packChunks    pack runs of >= 3 assistant/chunk deltas within a batch into {@code *-chunks} storage rows,
 *                      like the published writer (its default, {@code packChunks: true}); false writes every
 *                      event as its own line (the published writer with {@code packChunks: false})
 */
public record WriterOptions(boolean commitRecords, boolean manifest, boolean groupCommit, boolean packChunks) {
    /** As the four-argument form, packing chunk runs (the published writer's default). */
    public WriterOptions(boolean commitRecords, boolean manifest, boolean groupCommit) {
        this(commitRecords, manifest, groupCommit, true);
    }

    /** P1 + P2 + group commit, chunk runs packed. */
    public static WriterOptions defaults() {
        return new WriterOptions(true, true, true, true);
    }

    /** No protocol metadata, chunk runs packed: the bytes the published writer produces (still fsynced, group committed). */
    public static WriterOptions plain() {
        return new WriterOptions(false, false, true, true);
    }

    /** @return these options with chunk packing switched on or off */
    public WriterOptions withPackChunks(boolean pack) {
        return new WriterOptions(commitRecords, manifest, groupCommit, pack);
    }
}
