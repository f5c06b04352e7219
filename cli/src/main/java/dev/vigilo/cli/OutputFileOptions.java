package dev.vigilo.cli;

import dev.vigilo.common.input.OutputFiles;
import dev.vigilo.common.io.AtomicFiles;
import java.nio.file.Path;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code --out FILE} and {@code --force}, declared once: every command that writes a file the user names mixes them
 * in ({@code @Mixin OutputFileOptions output;}), so both options have one description and one behaviour, the
 * output-file rule of {@link OutputFiles} (docs/cli.md, "Output files"): {@link #check} before any work, then the
 * crash-safe {@link #write} (or the module's own write, given {@link #path} and {@link #force}). {@code --out} is
 * optional; a command that cannot do without it asks for {@link #required} first.
 */
final class OutputFileOptions {
    /** The option's name, as messages say it. */
    static final String OUT = "--out";

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(
            names = OUT,
            paramLabel = "FILE",
            description = "Write the output to FILE: its directory must exist, an existing file is kept unless"
                    + " --force is given, and a failed command leaves no partial file.")
    Path out;

    @Option(names = "--force", description = "Replace an existing output file.")
    boolean force;

    /** Whether {@code --out} was given. */
    boolean given() {
        return out != null;
    }

    /** The {@code --out} file, or null when not given. */
    Path path() {
        return out;
    }

    /** Whether an existing output file may be replaced. */
    boolean force() {
        return force;
    }

    /**
     * The {@code --out} file of a command that cannot do without it; refused as picocli refuses a missing required
     * option (exit 2). (Not {@code required = true}: the option is declared once, for every command.)
     */
    Path required() {
        if (out == null) {
            throw new ParameterException(command.commandLine(), "Missing required option: '--out=FILE'");
        }
        return out;
    }

    /** Checks the {@code --out} file, when given, against the output-file rule (exit 3 otherwise). */
    void check() {
        if (out != null) {
            check(out);
        }
    }

    /** Checks {@code target}, the file this command writes ({@code --out} or its default), against the rule. */
    void check(Path target) {
        OutputFiles.check(target, OUT, force);
    }

    /** Writes the {@code --out} file crash-safely ({@link OutputFiles#write}); {@link #check} first. */
    <T> T write(AtomicFiles.StreamContent<T> content) {
        return OutputFiles.write(out, OUT, force, content);
    }
}
