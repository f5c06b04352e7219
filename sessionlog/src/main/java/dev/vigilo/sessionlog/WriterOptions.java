package dev.vigilo.sessionlog;

/**
 * How a {@link SessionLogWriter} publishes commits.
 *
 * @param commitRecords P1: end every batch frame with a {@link CommitRecord}
 * @param manifest      P2: replace the sidecar {@link Manifest} after every durable batch
 * @param groupCommit   concurrent appenders share one frame and one fsync (false: one frame + fsync per append)
 */
public record WriterOptions(boolean commitRecords, boolean manifest, boolean groupCommit) {
    /** P1 + P2 + group commit. */
    public static WriterOptions defaults() {
        return new WriterOptions(true, true, true);
    }

    /** No protocol metadata: the bytes the published writer produces (still fsynced, group committed). */
    public static WriterOptions plain() {
        return new WriterOptions(false, false, true);
    }
}
