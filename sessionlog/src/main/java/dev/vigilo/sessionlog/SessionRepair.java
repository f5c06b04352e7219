package dev.vigilo.sessionlog;

import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * {@code vigilo session repair}: writes the log truncated to its high watermark (uncommitted tail, fenced and
 * truncated batches dropped; the torn tail's recovered events kept as the published reader keeps them) with
 * the closers of an interrupted turn appended, atomically. The original is kept: either written to
 * {@code out}, or in place (only when asked) with a hard-link backup {@code <log>.bak-<millis>}.
 */
public final class SessionRepair {
    /** Plaintext bytes per frame in a repaired log. */
    public static final long FRAME_BYTES = 1 << 20;

    private SessionRepair() {}

    /**
     * @param log     the log to repair
     * @param out     where to write the repaired log (must not exist); ignored when {@code inPlace}
     * @param inPlace replace {@code log} itself (holding its writer lock), keeping a backup link
     * @throws CorruptSessionLogException when the log is rejected (nothing is written)
     * @throws InvalidInputException     when {@code out} exists
     * @throws UnavailableException      on I/O failure
     * @throws FencedException      when in place and a writer holds the log
     */
    public static RepairReport repair(Path log, Path out, boolean inPlace) {
        return repair(log, out, inPlace, false);
    }

    /** As {@link #repair(Path, Path, boolean)}; {@code replaceOut} replaces an existing {@code out} atomically. */
    public static RepairReport repair(Path log, Path out, boolean inPlace, boolean replaceOut) {
        Objects.requireNonNull(log, "log");
        if (!inPlace) {
            Objects.requireNonNull(out, "out");
        }
        Rewriter.Result r = Rewriter.rewrite(log, out, inPlace, replaceOut, FRAME_BYTES, true);
        return new RepairReport(
                r.before(),
                r.output(),
                r.backup(),
                r.rowsWritten(),
                r.closersWritten(),
                r.framesWritten(),
                r.bytesWritten());
    }
}
