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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
            "Several runs of one experiment (on one machine or many sharing the durable root) divide its items "
                    + "between them; the items of a run that dies are finished by the others.",
            "Chat steps with rate_limit share the fleet-wide limiter of their endpoint with every process that calls "
                    + "it (through the control database: --control-db, VIGILO_CONTROL_DB, else the embedded one under "
                    + "Vigilo home); a pipeline's budget is kept there too.",
            "A progress bar on a terminal, one JSON line per finished item otherwise; the final status as one "
                    + "JSON line. Exit 0 when every item completed or was filtered, 1 when some failed, 4 when the "
                    + "budget stopped the run (raise budget.max_cost and run it again)."
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

    @Option(
            names = "--retry-failed",
            description = "Also run items that failed finally: their failed step gets its attempts again (their"
                    + " history is kept).")
    boolean retryFailed;

    @Option(
            names = "--cache-from",
            paramLabel = "EXPERIMENT",
            description = "Answer chat steps with cache: true from this experiment's answers too (same pipeline;"
                    + " repeatable).")
    List<String> cacheFrom = new ArrayList<>();

    @Option(
            names = "--lease-seconds",
            paramLabel = "N",
            defaultValue = "30",
            description = "On S3 roots: how long this run's slot outlives its last heartbeat before other runs take"
                    + " its items over (default ${DEFAULT-VALUE}).")
    int leaseSeconds;

    @Option(
            names = "--local-limits",
            description = "Apply each chat step's rate_limit per process, without the control database (with N"
                    + " processes the endpoint sees up to N times the limit). Not with a budget or a circuit_breaker.")
    boolean localLimits;

    /** More workers than this only multiply threads; the checkpoint log is the bottleneck well before. */
    private static final int MAX_WORKERS = 1024;

    @Override
    public Integer call() {
        if (workers < 1 || workers > MAX_WORKERS) {
            throw new InvalidInputException("--workers must be between 1 and " + MAX_WORKERS + ", got " + workers
                    + "; for example --workers 4");
        }
        if (leaseSeconds < 3 || leaseSeconds > 3600) {
            throw new InvalidInputException("--lease-seconds must be between 3 and 3600, got " + leaseSeconds
                    + "; for example --lease-seconds 30");
        }
        CommandSupport.segmentName(experiment, "--experiment");
        for (String other : cacheFrom) {
            CommandSupport.segmentName(other, "--cache-from");
        }
        PipelineSpec spec = PipelineParser.parse(pipeline);
        LogRoot root = DatagenCommand.durableRoot(durableRoot, store, CommandSupport.root(this.spec));
        if (localLimits && spec.budget() != null) {
            throw new InvalidInputException("--local-limits: pipeline " + spec.name() + " has a budget, which is kept"
                    + " in the control database; drop --local-limits (or the budget)");
        }
        if (localLimits && spec.hasCircuitBreaker()) {
            throw new InvalidInputException("--local-limits: pipeline " + spec.name() + " has a circuit_breaker, which"
                    + " is the fleet's (kept in the control database); drop --local-limits (or the circuit_breaker)");
        }
        // The control database only when the pipeline needs it: opening it costs a datagen run without rate limits
        // or budget nothing.
        boolean control = spec.budget() != null || (!localLimits && spec.fleetLimited());
        PrintWriter out = CommandSupport.out(this.spec);
        ExperimentStatus status;
        try (Connections connections = control ? CommandSupport.root(this.spec).connections() : null;
                DatagenProgressDisplay progress =
                        DatagenProgressDisplay.of(System.console() != null, experiment, out)) {
            PipelineRunner.Options options = new PipelineRunner.Options(root, experiment, workers, progress)
                    .withRetryFailed(retryFailed)
                    .withCacheFrom(cacheFrom)
                    .withLeaseTtl(Duration.ofSeconds(leaseSeconds));
            if (connections != null) {
                options = options.withControl(connections.control().jdbi());
            }
            status = PipelineRunner.run(spec, options);
        } catch (FencedException e) {
            // Another run took this run's slot over (its lease was not renewed in time) and fenced its writer.
            throw new FencedException(
                    "another run of experiment " + experiment + " of pipeline " + spec.name()
                            + " took over this run's part of the checkpoint log, so this run stopped (what it"
                            + " completed is kept and the other runs finish its items); run this command again to"
                            + " rejoin",
                    e);
        }
        out.println(status.toJson());
        return status.failed() > 0 ? ExitCode.FAILED : ExitCode.OK;
    }
}
