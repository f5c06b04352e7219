package dev.vigilo.cli;

import dev.vigilo.common.errors.Causes;
import dev.vigilo.common.errors.DatabaseErrors;
import dev.vigilo.common.errors.Secrets;
import dev.vigilo.common.errors.VigiloException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine;

/**
 * The one place that turns an exception into a message on stderr and an {@link ExitCode}. A
 * {@link VigiloException} prints its message, one line, and exits with {@link ExitCode#of} its kind; anything else
 * is a bug (exit 70). Every printed line has its credentials masked ({@link Secrets}) and its control characters
 * escaped; the stack trace and any further lines of a message appear only with {@code --verbose}.
 */
final class ErrorReporter implements CommandLine.IExecutionExceptionHandler {
    private final VigiloCommand root;

    ErrorReporter(VigiloCommand root) {
        this.root = root;
    }

    @Override
    public int handleExecutionException(Exception ex, CommandLine cmd, CommandLine.ParseResult parseResult) {
        PrintWriter err = cmd.getErr();
        Optional<VigiloException> known = classify(ex);
        boolean verbose = root.verbose();
        if (known.isPresent()) {
            List<String> lines = lines(known.get().getMessage());
            err.println("vigilo: error: " + lines.get(0));
            if (verbose) {
                lines.subList(1, lines.size()).forEach(err::println);
            } else if (lines.size() > 1) {
                err.println("(run again with --verbose for details)");
            }
        } else {
            err.println("vigilo: internal error: " + lines(describe(ex)).get(0));
            if (!verbose) {
                err.println("Run again with --verbose for details, and please report it.");
            }
        }
        if (verbose) {
            StringWriter trace = new StringWriter();
            ex.printStackTrace(new PrintWriter(trace));
            err.print(Secrets.mask(trace.toString()));
        }
        err.flush();
        return known.map(e -> ExitCode.of(e.kind())).orElse(ExitCode.INTERNAL);
    }

    /** The exit code {@code ex} gets; {@link ExitCode#INTERNAL} for a bug. */
    static int exitCode(Throwable ex) {
        return classify(ex).map(e -> ExitCode.of(e.kind())).orElse(ExitCode.INTERNAL);
    }

    /**
     * The error {@code ex} reports: itself or the first {@link VigiloException} among its causes (an executor may
     * have wrapped it); a lost database connection that reached the command unexplained is the database being
     * unavailable ({@link DatabaseErrors}). Empty for a bug.
     */
    static Optional<VigiloException> classify(Throwable ex) {
        Optional<VigiloException> known = Causes.find(ex, VigiloException.class);
        if (known.isPresent()) {
            return known;
        }
        return DatabaseErrors.unavailable(ex, "control database", "repeat the command")
                .map(VigiloException.class::cast);
    }

    private static String describe(Throwable ex) {
        return ex.getMessage() == null
                ? ex.getClass().getName()
                : ex.getClass().getSimpleName() + ": " + ex.getMessage();
    }

    /** The message's non-blank lines, masked and with control characters escaped; never empty. */
    static List<String> lines(String message) {
        List<String> lines = Secrets.mask(message == null ? "" : message)
                .lines()
                .map(String::strip)
                .filter(l -> !l.isEmpty())
                .map(ErrorReporter::escapeControls)
                .toList();
        return lines.isEmpty() ? List.of("(no message)") : lines;
    }

    private static String escapeControls(String line) {
        StringBuilder b = new StringBuilder(line.length());
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (Character.isISOControl(c)) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
