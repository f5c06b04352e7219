package dev.vigilo.cli;

import dev.vigilo.common.input.OutputFiles;
import dev.vigilo.sessionlog.RepairReport;
import dev.vigilo.sessionlog.SessionRepair;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code vigilo session repair FILE}: a log truncated to its high watermark, with closers, written atomically. */
@Command(
        name = "repair",
        mixinStandardHelpOptions = true,
        description = {
            "Write the log truncated to its high watermark, with closers for an interrupted turn, "
                    + "atomically; the original is kept.",
            "Default output: FILE.repaired. --in-place replaces FILE and keeps FILE.bak-<millis>."
        })
final class SessionRepairCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The session log.")
    Path file;

    @ArgGroup(exclusive = true)
    Target target;

    static final class Target {
        @Option(
                names = "--out",
                paramLabel = "F",
                description = "Write the repaired log here; its directory must exist, and an existing file is kept "
                        + "unless --force is given.")
        Path out;

        @Option(names = "--in-place", description = "Replace FILE (a backup FILE.bak-<millis> is kept).")
        boolean inPlace;
    }

    @Option(names = "--force", description = "Replace an existing output file (--out, or FILE.repaired).")
    boolean force;

    @Override
    public Integer call() {
        boolean inPlace = target != null && target.inPlace;
        Path out = inPlace
                ? null
                : target != null && target.out != null
                        ? target.out
                        : file.resolveSibling(file.getFileName() + ".repaired");
        SessionCommand.existingLog(file);
        if (out != null) {
            OutputFiles.check(out, "--out", force);
        }
        RepairReport r = SessionRepair.repair(file, out, inPlace, force);
        CommandSupport.out(spec)
                .printf(
                        "repaired %s -> %s: %d events kept, %d closers added, %d frames, %d bytes%s%n",
                        CommandSupport.shown(file),
                        CommandSupport.shown(r.output()),
                        r.stored(),
                        r.closers(),
                        r.frames(),
                        r.bytes(),
                        r.backup() == null ? "" : " (original kept as " + CommandSupport.shown(r.backup()) + ")");
        return ExitCode.OK;
    }
}
