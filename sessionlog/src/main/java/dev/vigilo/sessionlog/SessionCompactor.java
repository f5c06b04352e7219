package dev.vigilo.sessionlog;

import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.UnavailableException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * {@code vigilo session compact}: merges the committed view's small batch frames into frames of about
 * {@code frameBytes} plaintext (fewer frames: faster cold reads, better compression). No closers are added.
 * The result is accepted by the published reader with the same events (plus one final commit record for
 * protocol logs whose last batch was not committed by one).
 */
public final class SessionCompactor {
    /** Default plaintext bytes per merged frame. */
    public static final long DEFAULT_FRAME_BYTES =
            256L << 10; // measured: the official reader slows down with frames >= 1 MiB

    private SessionCompactor() {}

    /**
     * @param log        the log to compact
     * @param out        output path (must not exist), or null to compact in place (writer lock held, backup link kept)
     * @param frameBytes target plaintext bytes per frame (>= 1)
     * @throws CorruptSessionLogException when the log is rejected
     * @throws UnavailableException      on I/O failure
     * @throws FencedException      when in place and a writer holds the log
     */
    public static CompactReport compact(Path log, Path out, long frameBytes) {
        return compact(log, out, frameBytes, false);
    }

    /** As {@link #compact(Path, Path, long)}; {@code replaceOut} replaces an existing {@code out} atomically. */
    public static CompactReport compact(Path log, Path out, long frameBytes, boolean replaceOut) {
        Objects.requireNonNull(log, "log");
        long before = sizeOf(log);
        Rewriter.Result r = Rewriter.rewrite(log, out, out == null, replaceOut, frameBytes, false);
        return new CompactReport(
                r.output(),
                r.backup(),
                r.before().frames(),
                r.framesWritten(),
                before,
                r.bytesWritten(),
                r.rowsWritten());
    }

    private static long sizeOf(Path p) {
        try {
            return Files.size(p);
        } catch (java.io.IOException e) {
            throw new UnavailableException("cannot read " + p + ": " + e.getMessage(), e);
        }
    }
}
