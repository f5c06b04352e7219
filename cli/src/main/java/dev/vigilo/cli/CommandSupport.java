package dev.vigilo.cli;

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

    static UUID uploadId(String text) {
        try {
            return UUID.fromString(text);
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentException("\"" + text + "\" is not an upload id (a UUID such as "
                    + "3f2b6c1e-8d4a-4e7b-9c0d-1a2b3c4d5e6f); see `vigilo dataset list`");
        }
    }
}
