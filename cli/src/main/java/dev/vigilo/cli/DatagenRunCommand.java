package dev.vigilo.cli;

import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.datagen.ExperimentStatus;
import dev.vigilo.datagen.PipelineParser;
import dev.vigilo.datagen.PipelineRunner;
import dev.vigilo.datagen.PipelineSpec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code vigilo datagen run PIPELINE.yaml --experiment NAME}: runs or resumes an experiment. */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        description = {
            "Run a pipeline as an experiment, or resume it: steps already completed in the checkpoint log "
                    + "never run again. Safe to kill at any point; run the same command again to resume.",
            "A progress bar on a terminal, one JSON line per finished item otherwise; the final status as one "
                    + "JSON line. Exit 0 when every item completed or was filtered, 1 when some failed."
        })
final class DatagenRunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "PIPELINE.yaml", description = "The pipeline definition.")
    Path pipeline;

    @Option(names = "--experiment", required = true, paramLabel = "NAME", description = "The experiment's name.")
    String experiment;

    @Option(names = "--durable-root", paramLabel = "R", description = DatagenCommand.DURABLE_ROOT_HELP)
    String durableRoot;

    @Option(names = "--store", paramLabel = "NAME", description = DatagenCommand.STORE_HELP)
    String store;

    @Option(
            names = "--workers",
            paramLabel = "N",
            defaultValue = "4",
            description = "Items processed at once (default ${DEFAULT-VALUE}).")
    int workers;

    /** More workers than this only multiply threads; the checkpoint log is the bottleneck well before. */
    private static final int MAX_WORKERS = 1024;

    @Override
    public Integer call() {
        if (workers < 1 || workers > MAX_WORKERS) {
            throw new InvalidInputException("--workers must be between 1 and " + MAX_WORKERS + ", got " + workers
                    + "; for example --workers 4");
        }
        CommandSupport.segmentName(experiment, "--experiment");
        PipelineSpec spec = PipelineParser.parse(pipeline);
        LogRoot root = DatagenCommand.durableRoot(durableRoot, store, CommandSupport.root(this.spec));
        PrintWriter out = CommandSupport.out(this.spec);
        ExperimentStatus status;
        try (DatagenProgressDisplay progress = DatagenProgressDisplay.of(System.console() != null, experiment, out)) {
            status = PipelineRunner.run(spec, new PipelineRunner.Options(root, experiment, workers, progress));
        } catch (FencedException e) {
            // One writer per experiment: a second run took the checkpoint log over and this one must stop.
            throw new FencedException(
                    "another run of experiment " + experiment + " of pipeline " + spec.name()
                            + " took over its checkpoint log, so this run stopped (what it completed is kept); let"
                            + " the other run finish, or stop it and run this command again to resume",
                    e);
        }
        out.println(status.toJson());
        return status.failed() > 0 ? ExitCode.FAILED : ExitCode.OK;
    }
}
