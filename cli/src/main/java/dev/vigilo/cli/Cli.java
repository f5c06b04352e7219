package dev.vigilo.cli;

import java.io.PrintWriter;
import java.util.Objects;
import picocli.CommandLine;

/**
 * Builds the picocli command tree and runs one command line. Output streams and the environment are injected so
 * tests run the real CLI in-process; {@link Main} passes the process's own.
 */
public final class Cli {
    private Cli() {}

    /**
     * Runs {@code args} and returns the exit code (see {@link ExitCode}); never calls {@link System#exit}.
     */
    public static int run(Environment environment, PrintWriter out, PrintWriter err, String... args) {
        Objects.requireNonNull(environment, "environment");
        VigiloCommand root = new VigiloCommand(environment);
        CommandLine cli = new CommandLine(root)
                .setOut(out)
                .setErr(err)
                .setCaseInsensitiveEnumValuesAllowed(true)
                .setExecutionStrategy(parseResult -> {
                    Logging.configure(root.verbose());
                    return new CommandLine.RunLast().execute(parseResult);
                })
                .setParameterExceptionHandler(new UsageErrorHandler())
                .setExecutionExceptionHandler(new ErrorReporter(root));
        try {
            return cli.execute(args);
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** Unknown options and missing arguments: the message, a pointer to help, exit 2. */
    private static final class UsageErrorHandler implements CommandLine.IParameterExceptionHandler {
        @Override
        public int handleParseException(CommandLine.ParameterException ex, String[] args) {
            CommandLine cmd = ex.getCommandLine();
            PrintWriter err = cmd.getErr();
            // picocli echoes the offending argument: mask and escape it like every other message.
            ErrorReporter.lines(ex.getMessage()).forEach(line -> err.println("vigilo: " + line));
            CommandLine.UnmatchedArgumentException.printSuggestions(ex, err);
            err.println("Run '" + cmd.getCommandSpec().qualifiedName() + " --help' for usage.");
            return ExitCode.USAGE;
        }
    }
}
