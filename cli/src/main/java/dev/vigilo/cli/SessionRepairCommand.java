package dev.vigilo.cli;

import dev.vigilo.sessionlog.RepairReport;
import dev.vigilo.sessionlog.SessionRepair;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
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

    @Mixin
    OutputFileOptions output;

    @Option(names = "--in-place", description = "Replace FILE (a backup FILE.bak-<millis> is kept); not with --out.")
    boolean inPlace;

    @Override
    public Integer call() {
        if (inPlace && output.given()) {
            // What picocli says of an exclusive group (--out is a mixin's option, which a group cannot hold).
            throw new ParameterException(
                    spec.commandLine(), "Error: --out=FILE, --in-place are mutually exclusive (specify only one)");
        }
        Path out =
                inPlace ? null : output.given() ? output.path() : file.resolveSibling(file.getFileName() + ".repaired");
        SessionCommand.existingLog(file);
        if (out != null) {
            output.check(out);
        }
        RepairReport r = SessionRepair.repair(file, out, inPlace, output.force());
        CommandSupport.out(spec)
                .printf(
                        "repaired %s -> %s: %d events kept, %d closers added, %d frames, %d bytes%s%n",
                        CommandSupport.shown(file),
                        CommandSupport.shown(r.output()),
                        r.stored(),
                        r.closers(),
                        r.frames(),
                        r.bytes(),
                        SessionCommand.keptAs(r.backup()));
        return ExitCode.OK;
    }
}
