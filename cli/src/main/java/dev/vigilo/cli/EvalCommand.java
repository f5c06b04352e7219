package dev.vigilo.cli;

import dev.vigilo.agent.AgentEnvironment;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.Names;
import dev.vigilo.dataset.CaseMap;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.CreateResult;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunState;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo eval}: one evaluation in one command and one process: uploads the dataset (as {@code dataset upload}
 * does, or takes a finalized one), creates the run with execution requested (as {@code run create} does), executes it
 * with an in-process worker until the run ends (as {@code vigilo worker} does), and prints the run's status with its
 * gate table and verdict (as {@code run status} does). One JVM start and one join of the control database instead of
 * three (docs/benchmarks.md, "Fixed cost of an evaluation").
 *
 * <p>Exit codes as {@code run watch}: 0 when the run settles with the verdict passed, 1 when it settles with another
 * verdict, fails or is cancelled; 3 for a bad profile or dataset (found before anything is stored: the profile is
 * parsed before the upload, and the upload validates the whole file before it stores any of it); 130 on Ctrl-C or
 * SIGTERM, the held chunks given back so that a later {@code vigilo worker} continues the run.
 */
@Command(
        name = "eval",
        mixinStandardHelpOptions = true,
        description = {
            "Evaluate in one command: upload the dataset (or take --dataset-upload-id), create a run with the profile,"
                    + " execute it with an in-process worker, and print its status, gate table and verdict.",
            "The worker may also execute chunks of other runs while this one executes (as `vigilo worker` does); it"
                    + " stops when this run ends.",
            "Exit codes: 0 when the run settles with the verdict passed, 1 when it settles with the verdict failed or"
                    + " inconclusive (named on stderr), fails or is cancelled, 3 for a bad profile, dataset or option"
                    + " (nothing is stored), 130 when interrupted (held chunks are given back; `vigilo worker`"
                    + " continues the run)."
        })
final class EvalCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = true, multiplicity = "1")
    RunCreateCommand.ProfileSource profile;

    @ArgGroup(exclusive = true, multiplicity = "1")
    DatasetSource dataset;

    static final class DatasetSource {
        @Option(
                names = "--dataset",
                paramLabel = "FILE",
                description = "The file of cases to upload, as `dataset upload FILE` takes it (.jsonl, .jsonl.gz,"
                        + " .jsonl.zst, .csv, .parquet or a directory of .parquet shards).")
        Path file;

        @Option(
                names = "--dataset-upload-id",
                paramLabel = "ID",
                description = "A finalized dataset instead (see `vigilo dataset list`).")
        String uploadId;
    }

    @Option(
            names = "--map",
            paramLabel = "TARGET=SOURCE,...",
            description = "With --dataset: which column or field becomes which case field, as `dataset upload --map`.")
    String map;

    @Option(
            names = "--name",
            description = "With --dataset: the dataset's label, as `dataset upload --name` (default: the file name).")
    String name;

    @Option(
            names = "--concurrency",
            paramLabel = "N",
            description = "Cases the in-process worker executes at once, 1.." + Worker.Options.MAX_CONCURRENCY
                    + " (default: " + WorkerCommand.DEFAULT_CONCURRENCY + ").")
    int concurrency = WorkerCommand.DEFAULT_CONCURRENCY;

    @Option(names = "--label", paramLabel = "TEXT", description = "The run's label, as `run create --label`.")
    String label;

    @Option(
            names = "--run-id",
            paramLabel = "UUID",
            description = "Choose the run id (repeat the command with it to continue an interrupted evaluation)."
                    + " Default: a new one.")
    String runId;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        // Everything that can be checked without the database is checked before anything is stored.
        if (concurrency < 1 || concurrency > Worker.Options.MAX_CONCURRENCY) {
            throw new InvalidInputException("--concurrency must be between 1 and " + Worker.Options.MAX_CONCURRENCY
                    + ", got " + concurrency + "; for example --concurrency " + WorkerCommand.DEFAULT_CONCURRENCY);
        }
        if (dataset.file == null && (map != null || name != null)) {
            throw new InvalidInputException((map != null ? "--map" : "--name")
                    + " describes a file to upload: give it with --dataset FILE, or leave it out with"
                    + " --dataset-upload-id");
        }
        Optional<String> runLabel = Optional.ofNullable(label).map(l -> Names.label(l, "--label"));
        Optional<UUID> chosenRun = Optional.ofNullable(runId).map(id -> CommandSupport.runId(id, "--run-id"));
        Optional<UUID> existing =
                Optional.ofNullable(dataset.uploadId).map(id -> CommandSupport.uploadId(id, "--dataset-upload-id"));
        Optional<UploadRequest> upload = Optional.ofNullable(dataset.file)
                .map(f -> new UploadRequest(
                        f,
                        Optional.ofNullable(name),
                        Optional.empty(),
                        Optional.ofNullable(map).map(m -> CaseMap.parse(m, "--map"))));
        ProfileInput input = profile.file != null ? ProfileInput.file(profile.file) : ProfileInput.inline(profile.text);
        input.parse(); // a bad profile is refused (exit 3) before the dataset is uploaded

        PrintWriter out = CommandSupport.out(spec);
        PrintWriter err = CommandSupport.err(spec);
        VigiloCommand root = CommandSupport.root(spec);
        Thread main = Thread.currentThread();
        try (SignalStop signal = SignalStop.install();
                Connections connections = root.connections()) {
            signal.onSignal(main::interrupt);
            // The embedded server's join (or start), then the execution schema's opening, overlap the upload's
            // reading and storing of the cases: the upload needs the control database only to record its entry.
            connections.openAllInBackground();
            StartupWarmup.start(Set.of(StartupWarmup.Item.TLS_CONTEXT)); // the worker's agent client needs it
            UUID run = null;
            try {
                UUID uploadId;
                if (upload.isPresent()) {
                    DatasetEntry entry;
                    try (ProgressDisplay progress = ProgressDisplay.forTerminal(dataset.file)) {
                        entry = new DatasetCatalog(() -> connections.control().jdbi())
                                .upload(upload.get(), connections.openStore(Optional.empty()), progress);
                    }
                    uploadId = entry.uploadId();
                    note(err, "dataset " + uploadId + ": " + entry.caseCount() + " cases uploaded");
                } else {
                    uploadId = existing.orElseThrow();
                }
                CreateResult created =
                        RunCreateCommand.create(connections, input, uploadId, chosenRun, false, runLabel);
                run = created.runId();
                RunCreateCommand.sandboxWarning(input, root.environment().variables())
                        .ifPresent(w -> note(err, w));
                note(
                        err,
                        "run " + run + " " + created.status().spelling() + ": " + created.expectedChunks() + " chunks, "
                                + created.cases() + " cases");
                if (created.status() != RunState.SETTLED
                        && created.status() != RunState.FAILED
                        && created.status() != RunState.CANCELLED) {
                    execute(connections, root.environment(), signal, run, err);
                }
                if (signal.signalled()) {
                    return interrupted(err, run);
                }
            } catch (RuntimeException e) {
                if (signal.signalled()) {
                    return interrupted(err, run);
                }
                throw e;
            }
            RunStatusCommand.Reading r = RunStatusCommand.read(connections, run);
            if (json.requested()) {
                json.printDocument(r.json());
            } else {
                out.println("run " + run);
                r.print(out);
            }
            out.flush();
            return RunWatchCommand.exitCode(r, err);
        }
    }

    /**
     * Executes run {@code run} with a worker in this process until the run ends: this worker's settlement of it stops
     * the worker at once; a watcher stops it when another worker (sharing the control database) ended the run.
     */
    private void execute(
            Connections connections, Environment environment, SignalStop signal, UUID run, PrintWriter err) {
        ExecutionStatusReader reader = new ExecutionStatusReader(connections.placements());
        Worker[] worker = new Worker[1];
        try (WorkerProgress progress = new WorkerProgress(err, reader, System.console() != null)) {
            Worker.Listener listener = new BothListeners(progress, new Worker.Listener() {
                @Override
                public void runSettled(UUID runId, String status, Duration took) {
                    if (runId.equals(run)) {
                        worker[0].stop();
                    }
                }
            });
            worker[0] = new Worker(
                    connections.placements(),
                    connections.storage(),
                    Worker.Options.defaults(concurrency, false),
                    listener,
                    AgentEnvironment.system(),
                    environment.vigiloHome().resolve("sandboxes"));
            signal.onSignal(worker[0]::stop);
            Thread watcher = RunEndWatch.stopWhenEnded(reader, run, worker[0], "eval-watch", 1_000);
            try {
                worker[0].run();
            } finally {
                watcher.interrupt();
            }
        }
    }

    private static int interrupted(PrintWriter err, UUID run) {
        err.println(
                run == null
                        ? "vigilo: interrupted before the run was created; nothing half-written counts. Repeat the"
                                + " command."
                        : "vigilo: interrupted; the held chunks were given back. `vigilo worker` (or this command"
                                + " with --run-id " + run + ") continues run " + run + ".");
        err.flush();
        return ExitCode.INTERRUPTED;
    }

    private static void note(PrintWriter err, String line) {
        synchronized (err) {
            err.println(line);
            err.flush();
        }
    }
}
