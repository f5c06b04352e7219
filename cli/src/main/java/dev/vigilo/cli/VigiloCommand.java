package dev.vigilo.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/** {@code vigilo}: the root command and the options every sub-command inherits. */
@Command(
        name = "vigilo",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = {"Durable infrastructure for generating synthetic data with LLM agents and evaluating them.", ""},
        footer = {
            "",
            "Environment:",
            "  VIGILO_HOME            Vigilo's home directory (default ~/.vigilo): embedded PostgreSQL data, the",
            "                         default local object store and temporary files (tmp/).",
            "  VIGILO_CONTROL_DB      JDBC URL of the control database (default: embedded PostgreSQL).",
            "  VIGILO_STORAGE_CONFIG  storage.toml naming the object stores (default: a local store in VIGILO_HOME).",
            "  VIGILO_EXECUTION_CONFIG execution.toml naming the execution databases (default: the control database).",
            "",
            "Exit codes: 0 ok, 1 check failed or damaged, 2 usage, 3 invalid input or not found,",
            "  4 conflict or fenced, 5 service unavailable, 70 internal error, 130 interrupted."
        })
final class VigiloCommand implements Runnable {
    /**
     * The sub-commands, in the order help lists them. Not in the annotation: {@link Cli} registers only the one a
     * command line names (building picocli's model of every command costs a short command most of its start-up).
     */
    static final List<Class<?>> SUBCOMMANDS = List.of(
            QuickstartCommand.class,
            EvalCommand.class,
            DatasetCommand.class,
            RunCommand.class,
            WorkerCommand.class,
            PlacementCommand.class,
            SessionCommand.class,
            DatagenCommand.class,
            VerifyCommand.class,
            ServeCommand.class,
            picocli.CommandLine.HelpCommand.class);

    private final Environment environment;

    @Spec
    CommandSpec spec;

    @Option(names = "--verbose", scope = ScopeType.INHERIT, description = "Log what Vigilo does (to stderr).")
    boolean verbose;

    @Option(
            names = "--control-db",
            scope = ScopeType.INHERIT,
            paramLabel = "JDBC_URL",
            description = "Control database JDBC URL; overrides VIGILO_CONTROL_DB. Default: embedded PostgreSQL.")
    String controlDb;

    @Option(
            names = "--storage-config",
            scope = ScopeType.INHERIT,
            paramLabel = "FILE",
            description = "storage.toml naming the object stores; overrides VIGILO_STORAGE_CONFIG.")
    Path storageConfig;

    @Option(
            names = "--execution-config",
            scope = ScopeType.INHERIT,
            paramLabel = "FILE",
            description = "execution.toml naming the execution databases; overrides VIGILO_EXECUTION_CONFIG."
                    + " Default: the control database.")
    Path executionConfig;

    VigiloCommand(Environment environment) {
        this.environment = Objects.requireNonNull(environment, "environment");
    }

    boolean verbose() {
        return verbose;
    }

    Environment environment() {
        return environment;
    }

    /** What the command needs, opened lazily; the caller closes it. */
    Connections connections() {
        return new Connections(
                environment,
                Optional.ofNullable(controlDb),
                Optional.ofNullable(storageConfig),
                Optional.ofNullable(executionConfig));
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
