package dev.vigilo.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.Objects;
import picocli.CommandLine.Model.CommandSpec;

/**
 * What a check found, reported the one way the verify commands ({@code vigilo verify}, {@code dataset verify}) end:
 * the verdict on stdout (the JSON document with {@code --json}, else the text lines: {@code intact: ...}, or the
 * damaged object), for damage also {@code vigilo: error: PROBLEM} on stderr, and exit 0 when intact, 1 otherwise.
 *
 * @param intact whether everything checked out
 * @param json the {@code --json} document
 * @param text the text form's lines
 * @param problem for damage: what is wrong (the error line); null when intact
 */
record Verification(boolean intact, Object json, List<String> text, String problem) {
    Verification {
        Objects.requireNonNull(json, "json");
        text = List.copyOf(text);
        if (intact != (problem == null)) {
            throw new IllegalArgumentException("a problem is given exactly when the check found damage");
        }
    }

    static Verification intact(Object json, List<String> text) {
        return new Verification(true, json, text, null);
    }

    static Verification damaged(Object json, String line, String problem) {
        return new Verification(false, json, List.of(line), Objects.requireNonNull(problem, "problem"));
    }

    /** The check a verify command runs over its connections. */
    interface Check {
        Verification run(Connections connections);
    }

    /** Runs {@code check} over the command's connections and reports what it found; returns the exit code. */
    static int run(CommandSpec spec, JsonOption json, Check check) {
        try (Connections connections = CommandSupport.root(spec).connections()) {
            return check.run(connections).report(spec, json);
        }
    }

    /** Prints the verdict (and the problem, on stderr) and returns the exit code. */
    int report(CommandSpec spec, JsonOption json) {
        if (json.requested()) {
            json.print(this.json);
        } else {
            PrintWriter out = CommandSupport.out(spec);
            text.forEach(out::println);
        }
        if (!intact) {
            CommandSupport.err(spec).println("vigilo: error: " + problem);
            return ExitCode.FAILED;
        }
        return ExitCode.OK;
    }
}
