package dev.vigilo.cli;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.sessionlog.CompactReport;
import dev.vigilo.sessionlog.SessionCompactor;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
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

    @Mixin
    OutputFileOptions output;

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
        output.check();
        CompactReport r = SessionCompactor.compact(file, output.path(), target, output.force());
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
                        SessionCommand.keptAs(r.backup()));
        return ExitCode.OK;
    }
}
