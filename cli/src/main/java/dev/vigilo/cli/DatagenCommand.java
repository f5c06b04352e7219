package dev.vigilo.cli;

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

        @Option(
                names = "--durable-root",
                paramLabel = "R",
                description = "A local directory or s3://bucket/prefix (S3 settings from AWS_* variables). "
                        + "Default: VIGILO_HOME.")
        String durableRoot;

        /** The pipeline's name, checked (exit 3 for a name that is not a path segment). */
        String pipeline() {
            return CommandSupport.segmentName(pipeline, "--pipeline");
        }

        /** The experiment's name, checked likewise. */
        String experiment() {
            return CommandSupport.segmentName(experiment, "--experiment");
        }
    }

    /** {@code --durable-root}, else Vigilo home. */
    static String durableRoot(String option, VigiloCommand root) {
        return option != null ? option : root.environment().vigiloHome().toString();
    }
}
