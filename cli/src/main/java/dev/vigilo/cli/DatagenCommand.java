package dev.vigilo.cli;

import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.errors.InvalidInputException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code vigilo datagen}: resumable data-generation pipelines over the checkpoint log. */
@Command(
        name = "datagen",
        mixinStandardHelpOptions = true,
        description = {
            "Run data-generation pipelines that survive kill -9, and inspect and export their experiments.",
            "Each experiment's checkpoint log is a Lance dataset under "
                    + "<durable-root>/datagen_checkpoints/<pipeline>/<experiment>/log.lance (docs/datagen.md)."
        },
        subcommands = {
            DatagenRunCommand.class,
            DatagenStatusCommand.class,
            DatagenItemCommand.class,
            DatagenExportCommand.class
        })
final class DatagenCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** Options naming one experiment, shared by status, item and export. */
    static final class Experiment {
        @Option(names = "--pipeline", required = true, paramLabel = "P", description = "The pipeline's name.")
        String pipeline;

        @Option(names = "--experiment", required = true, paramLabel = "E", description = "The experiment's name.")
        String experiment;

        @Option(names = "--durable-root", paramLabel = "R", description = DURABLE_ROOT_HELP)
        String durableRoot;

        @Option(names = "--store", paramLabel = "NAME", description = STORE_HELP)
        String store;

        LogRoot root(CommandSpec spec) {
            return DatagenCommand.durableRoot(durableRoot, store, CommandSupport.root(spec));
        }

        /** The pipeline's name, checked (exit 3 for a name that is not a path segment). */
        String pipeline() {
            return CommandSupport.segmentName(pipeline, "--pipeline");
        }

        /** The experiment's name, checked likewise. */
        String experiment() {
            return CommandSupport.segmentName(experiment, "--experiment");
        }
    }

    static final String DURABLE_ROOT_HELP = "Where checkpoint logs live: a local directory, s3://bucket/prefix (inside"
            + " an S3 store of the storage config) or store:NAME[/prefix]. Default: VIGILO_HOME.";

    static final String STORE_HELP =
            "Keep checkpoint logs in the storage-config store NAME (the same as --durable-root store:NAME).";

    /**
     * The durable root: {@code --durable-root} or {@code --store} resolved through the storage configuration (used
     * only for {@code s3://} and {@code store:} roots, checked whenever one is named), else Vigilo home.
     */
    static LogRoot durableRoot(String durableRoot, String store, VigiloCommand root) {
        if (durableRoot != null && store != null) {
            throw new InvalidInputException("give --durable-root or --store, not both");
        }
        // Made even for a local root: a named configuration file is checked by every command alike.
        try (Connections connections = root.connections()) {
            if (durableRoot == null && store == null) {
                return LogRoot.local(root.environment().vigiloHome());
            }
            String text = store != null ? "store:" + store : durableRoot;
            return LogRoot.resolve(text, connections::storage);
        }
    }
}
