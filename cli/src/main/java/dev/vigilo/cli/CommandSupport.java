package dev.vigilo.cli;

import dev.vigilo.common.input.Ids;
import dev.vigilo.common.input.Names;
import java.io.PrintWriter;
import java.util.UUID;
import picocli.CommandLine.Model.CommandSpec;

/** Small helpers shared by the leaf commands. */
final class CommandSupport {
    private CommandSupport() {}

    static VigiloCommand root(CommandSpec spec) {
        return (VigiloCommand) spec.root().userObject();
    }

    static PrintWriter out(CommandSpec spec) {
        return spec.commandLine().getOut();
    }

    static PrintWriter err(CommandSpec spec) {
        return spec.commandLine().getErr();
    }

    /** An upload id as typed: canonical or refused (exit 3). */
    static UUID uploadId(String text, String what) {
        return Ids.uuid(text, what, "upload id", "see `vigilo dataset list` for upload ids");
    }

    /** A run id as typed: canonical or refused (exit 3). */
    static UUID runId(String text, String what) {
        return Ids.uuid(text, what, "run id", "`vigilo run create` prints the run id");
    }

    /** {@code text} as one printable line: credentials masked, control characters escaped, lines joined. */
    static String oneLine(String text) {
        return String.join(" ", ErrorReporter.lines(text));
    }

    /**
     * A path (or other text the user gave) as a message shows it: control characters, line breaks and terminal
     * escapes written as {@code \\uXXXX} ({@link Names#printable}), so a file name cannot rewrite what the
     * terminal shows or split a message; printable text is unchanged.
     */
    static String shown(Object path) {
        return Names.printable(String.valueOf(path));
    }

    /** A path-segment name (pipeline, experiment) as typed, or refused (exit 3). */
    static String segmentName(String text, String what) {
        return Names.segment(text, what);
    }
}
