package dev.vigilo.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code --json}, declared once: every command with a JSON form mixes it in ({@code @Mixin JsonOption json;}), so the
 * option has one description and one behaviour: the command prints one JSON document (an object, an array, or for
 * streamed output one per line) on its stdout, in the shape docs/cli.md gives for that command, instead of text.
 */
final class JsonOption {
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(names = "--json", description = "Print JSON for scripts instead of text (the keys are in docs/cli.md).")
    boolean requested;

    /** Whether {@code --json} was given. */
    boolean requested() {
        return requested;
    }

    /** {@code value} encoded by the CLI's one mapper ({@link Json}), as one line on the command's stdout. */
    void print(Object value) {
        printDocument(Json.write(value));
    }

    /** A JSON document a module encoded (the module owns its shape), as one line on the command's stdout. */
    void printDocument(String json) {
        CommandSupport.out(command).println(json);
    }
}
