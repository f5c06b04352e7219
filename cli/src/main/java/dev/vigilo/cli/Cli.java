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
        CommandLine cli = commandLine(root, args)
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

    /**
     * The command tree for {@code args}: the root with only the sub-command the arguments name when they name one
     * (its own sub-commands complete), else with every sub-command (help, usage errors, suggestions). Parsing then
     * behaves as with the full tree: an argument that names a command names the same one in both.
     */
    static CommandLine commandLine(VigiloCommand root, String... args) {
        CommandLine cli = new CommandLine(root);
        String named = namedCommand(cli.getCommandSpec(), args);
        for (Class<?> type : VigiloCommand.SUBCOMMANDS) {
            if (named == null
                    || named.equals(
                            type.getAnnotation(CommandLine.Command.class).name())) {
                cli.addSubcommand(type);
            }
        }
        return cli;
    }

    /**
     * The top-level command {@code args} run: the first argument that is neither an option of the root nor the
     * value of one. Null when there is none, when it is {@code help} (which describes the others) or not a command,
     * or when picocli could read the arguments differently ({@code --}, an {@code @file} of arguments).
     */
    private static String namedCommand(CommandLine.Model.CommandSpec root, String... args) {
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--") || arg.startsWith("@")) {
                return null;
            }
            if (arg.startsWith("-")) {
                CommandLine.Model.OptionSpec option = arg.contains("=") ? null : root.findOption(arg);
                if (option != null && option.arity().max() > 0) {
                    i++;
                }
                continue;
            }
            for (Class<?> type : VigiloCommand.SUBCOMMANDS) {
                String name = type.getAnnotation(CommandLine.Command.class).name();
                if (name.equals(arg)) {
                    return name.equals("help") ? null : name;
                }
            }
            return null;
        }
        return null;
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
