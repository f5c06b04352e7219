package dev.vigilo.sessionlog;

/**
 * Result of {@link SessionRepair#repair}.
 *
 * @param before       the verdict on the input
 * @param output       the repaired log written
 * @param backup       hard link to the original when repaired in place, else null
 * @param stored       rows of the committed view written (commit records included)
 * @param closers      closers appended to close an interrupted turn
 * @param frames       frames in the output, header included
 * @param bytes        size of the output
 */
public record RepairReport(
        VerifyReport before,
        java.nio.file.Path output,
        java.nio.file.Path backup,
        long stored,
        long closers,
        long frames,
        long bytes) {}
