package dev.vigilo.cli;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.OutputFiles;
import dev.vigilo.sessionlog.CompactReport;
import dev.vigilo.sessionlog.SessionCompactor;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code vigilo session compact FILE}: merges small frames into larger ones. */
@Command(
        name = "compact",
        mixinStandardHelpOptions = true,
        description = {
            "Merge a log's small frames into larger ones (faster to read, smaller to store); the result "
                    + "reads identically.",
            "Without --out the log is replaced in place under its writer lock, keeping FILE.bak-<millis>.",
            "The output keeps the log's encoding unless --out names the other one: compact to F.jsonl to decompress, "
                    + "to F.jsonl.zstd to compress."
        })
final class SessionCompactCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The session log.")
    Path file;

    @Option(
            names = "--out",
            paramLabel = "F",
            description = "Write the compacted log here instead; its directory must exist, and an existing file is "
                    + "kept unless --force is given.")
    Path out;

    @Option(names = "--force", description = "Replace an existing --out file.")
    boolean force;

    @Option(
            names = "--frame-bytes",
            paramLabel = "N",
            description = "Target uncompressed bytes per frame (default 262144).")
    Long frameBytes;

    @Override
    public Integer call() {
        long target = frameBytes == null ? SessionCompactor.DEFAULT_FRAME_BYTES : frameBytes;
        if (target < 1) {
            throw new InvalidInputException("--frame-bytes must be positive, got " + target + "; for example 262144");
        }
        SessionCommand.existingLog(file);
        if (out != null) {
            OutputFiles.check(out, "--out", force);
        }
        CompactReport r = SessionCompactor.compact(file, out, target, force);
        CommandSupport.out(spec)
                .printf(
                        "compacted %s -> %s: %d -> %d frames, %d -> %d bytes, %d events%s%n",
                        CommandSupport.shown(file),
                        CommandSupport.shown(r.output()),
                        r.framesBefore(),
                        r.framesAfter(),
                        r.bytesBefore(),
                        r.bytesAfter(),
                        r.events(),
                        r.backup() == null ? "" : " (original kept as " + CommandSupport.shown(r.backup()) + ")");
        return ExitCode.OK;
    }
}
