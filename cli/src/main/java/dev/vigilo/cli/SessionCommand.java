package dev.vigilo.cli;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.input.InputFiles;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code vigilo session}: agent session logs ({@code session.jsonl.zstd}, {@code session.jsonl}) as small write-ahead logs. */
@Command(
        name = "session",
        mixinStandardHelpOptions = true,
        description = {
            "Verify, read, repair and compact agent session logs (session.jsonl.zstd, or session.jsonl uncompressed).",
            "Compatible with the published DeepSeek Harness format; see docs/formats/session-log.md."
        },
        subcommands = {
            SessionVerifyCommand.class,
            SessionCatCommand.class,
            SessionRepairCommand.class,
            SessionCompactCommand.class,
            SessionViewCommand.class
        })
final class SessionCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** How a command that rewrote a log names the backup it kept ({@code --in-place}): empty when it kept none. */
    static String keptAs(java.nio.file.Path backup) {
        return backup == null ? "" : " (original kept as " + CommandSupport.shown(backup) + ")";
    }

    /**
     * A missing, unreadable or non-regular log is invalid input (exit 3), said before anything is read: the one
     * input-file rule ({@link InputFiles}), so a named pipe or a device is named for what it is and never opened.
     */
    static java.nio.file.Path existingLog(java.nio.file.Path file) {
        java.util.Optional<String> problem = InputFiles.problem(file);
        if (problem.isEmpty()) {
            return file;
        }
        if (!java.nio.file.Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            throw new NotFoundException(file + ": no such session log file; check the path");
        }
        throw new InvalidInputException(
                file + " " + problem.get() + "; give the session log file (session.jsonl.zstd or session.jsonl)");
    }
}
