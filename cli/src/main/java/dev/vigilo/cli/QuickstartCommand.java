package dev.vigilo.cli;

import dev.vigilo.agent.AgentEnvironment;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.io.AtomicFiles;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.dataset.VerifyReport;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.CreateResult;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.plan.RunState;
import dev.vigilo.plan.RunStatus;
import dev.vigilo.plan.RunStatusReader;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo quickstart}: the main job on the embedded defaults. Uploads the bundled example dataset and verifies
 * it, creates a run with the bundled example profile and its example agent (a single-file Java program), admits it,
 * executes it with an in-process worker, and prints the settled gate table and verdict.
 *
 * <p>Idempotent: the upload id and the run id derive from the example's content, so a second call finds the same
 * run. A run that already ended is shown again, not executed twice; one interrupted while executing is continued.
 */
@Command(
        name = "quickstart",
        mixinStandardHelpOptions = true,
        description = {
            "Run the bundled example evaluation end to end: upload and verify the example dataset, create a run with"
                    + " the example profile and agent, execute it with an in-process worker, and print the gate"
                    + " table and the verdict.",
            "Needs nothing but Java: the control database defaults to an embedded PostgreSQL under VIGILO_HOME.",
            "Running it again shows the same run (its id derives from the example); a run that already ended is"
                    + " not executed again. Exit 0 when the run settled (whatever its verdict), 1 when it failed."
        })
final class QuickstartCommand implements Callable<Integer> {
    static final String EXAMPLE = "examples/quickstart.jsonl";
    static final String PROFILE = "examples/quickstart-profile.yaml";
    static final String AGENT = "examples/agent/QuickAgent.java";
    /** Cases run at once: each starts a JVM for the example agent, so a few in parallel hide the start-up time. */
    static final int CONCURRENCY = 4;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = CommandSupport.out(spec);
        PrintWriter err = CommandSupport.err(spec);
        VigiloCommand root = CommandSupport.root(spec);
        Thread main = Thread.currentThread();
        try (SignalStop signal = SignalStop.install();
                Connections connections = root.connections()) {
            signal.onSignal(main::interrupt);
            try {
                return quickstart(connections, root.environment(), signal, out, err);
            } catch (RuntimeException e) {
                if (signal.signalled()) {
                    err.println("vigilo: interrupted; nothing half-written counts. Run `vigilo quickstart` again to"
                            + " continue.");
                    err.flush();
                    return ExitCode.INTERRUPTED;
                }
                throw e;
            }
        }
    }

    private int quickstart(
            Connections connections, Environment environment, SignalStop signal, PrintWriter out, PrintWriter err) {
        out.println("Vigilo home:       " + CommandSupport.shown(environment.vigiloHome()));
        DatasetCatalog catalog = new DatasetCatalog(connections.control().jdbi());
        out.println("control database:  " + connections.control().description());
        ObjectStore store = connections.openStore(Optional.empty());
        out.println("object store:      " + store.binding());
        Path example = extractExample();
        DatasetEntry entry;
        try {
            UUID uploadId = UUID.nameUUIDFromBytes(
                    ("vigilo-quickstart:" + sha256Hex(example)).getBytes(StandardCharsets.UTF_8));
            entry = catalog.upload(
                    new UploadRequest(example, Optional.of("quickstart-example"), Optional.of(uploadId)),
                    store,
                    UploadProgress.NONE);
        } finally {
            try {
                Files.deleteIfExists(example);
            } catch (IOException e) {
                // a temporary copy; nothing depends on its removal
            }
        }
        VerifyReport report = DatasetReader.open(entry, store).verify();
        out.println();
        out.println("Uploaded the example dataset (" + EXAMPLE + "):");
        out.println("  upload id:       " + entry.uploadId());
        out.println("  cases:           " + entry.caseCount());
        out.println("  source hash:     " + entry.sourceSha256());
        out.println("  membership uuid: " + entry.membershipUuid());
        out.println("  index root:      " + entry.indexRoot().key());
        out.println("  verified:        " + report.caseCount() + " cases, " + report.caseFiles() + " case file(s), "
                + report.indexDocuments() + " index document(s), " + report.bytesRead() + " bytes");

        String profile = readResource(PROFILE);
        Path agentDirectory = installAgent(environment.vigiloHome().resolve("quickstart"));
        UUID runId = UUID.nameUUIDFromBytes(("vigilo-quickstart-run:" + entry.uploadId() + ":"
                        + Sha256.of(profile.getBytes(StandardCharsets.UTF_8)).toHex())
                .getBytes(StandardCharsets.UTF_8));
        RunStatusReader runs = new RunStatusReader(connections.control().jdbi());
        RunStatus before = runs.statusOrNull(runId);
        if (before == null || before.status() == RunState.CREATING) {
            CreateResult created = new RunPreparation(connections.control().jdbi(), connections.storage())
                    .create(new CreateRequest(
                            ProfileInput.inline(profile),
                            entry.uploadId(),
                            Optional.of(runId),
                            false,
                            connections.execution().aliases()));
            if (created.status() == RunState.CREATING) {
                new Admission(connections.placements(), connections.storage()).admit(runId);
            }
        }
        RunStatus status = runs.status(runId);
        out.println();
        out.println("Created a run with the example profile (" + PROFILE + ") and agent (" + AGENT + "):");
        out.println("  run id:          " + runId);
        out.println("  plan:            "
                + status.creationProgress().planStatus().spelling() + ", "
                + status.expectedChunks() + " chunk(s), "
                + status.shards().stream().mapToLong(RunStatus.Shard::cases).sum() + " cases");
        Map<String, Long> gates = new LinkedHashMap<>();
        status.shards().forEach(sh -> sh.gates().forEach((g, n) -> gates.merge(g, n, Long::sum)));
        out.println("  planned cases:   " + gates);

        ExecutionStatusReader reader = new ExecutionStatusReader(connections.placements());
        ExecutionStatus execution = reader.status(runId);
        out.println();
        if (execution.finished()) {
            out.println("The example run already ended (" + execution.status() + "); shown again, not executed twice"
                    + " (its id derives from the example dataset and profile).");
        } else {
            out.println("Executing " + execution.execution().cases() + " cases with an in-process worker (concurrency "
                    + CONCURRENCY + "); the agent runs `java " + AGENT + "` in " + agentDirectory + " ...");
            out.flush();
            Worker worker = new Worker(
                    connections.placements(),
                    connections.storage(),
                    Worker.Options.defaults(CONCURRENCY, true),
                    Worker.Listener.NONE,
                    AgentEnvironment.system().withWorkingDirectory(agentDirectory),
                    environment.vigiloHome().resolve("sandboxes"));
            signal.onSignal(worker::stop);
            Thread watcher = RunEndWatch.stopWhenEnded(reader, runId, worker, "quickstart-watch", 500);
            try {
                worker.run();
            } finally {
                watcher.interrupt();
            }
            if (signal.signalled()) {
                err.println("vigilo: interrupted; the held chunks were given back. Run `vigilo quickstart` again (or"
                        + " `vigilo worker`) to finish run " + runId + ".");
                err.flush();
                return ExitCode.INTERRUPTED;
            }
            execution = reader.status(runId);
        }
        out.println();
        out.println("Run " + runId + ": " + execution.status() + ", verdict " + ExecutionView.verdict(execution));
        ExecutionView.printGates(out, execution.gates());
        execution.failureReason().ifPresent(r -> out.println("failure reason: " + r));
        long errored =
                execution.gates().stream().mapToLong(GateResult::errored).max().orElse(0);
        if (errored > 0) {
            out.println(errored + " case(s) errored: `vigilo run results " + runId + "` shows each error (the"
                    + " example agent needs `java` on the PATH).");
        }
        out.println();
        out.println("Every case's output and evaluator results: `./vigilo run results " + runId + "`.");
        out.println(
                "Next: your own evaluation in one command: `./vigilo eval --profile-file YOUR-profile.yaml --dataset"
                        + " YOUR.jsonl` (or `./vigilo dataset upload`, `./vigilo run create` and `./vigilo worker` one by one).");
        out.println("Dashboard: `./vigilo serve`, then open http://127.0.0.1:7070/runs/" + runId);
        if (execution.status().equals("failed")) {
            err.println("vigilo: the example run failed: "
                    + CommandSupport.oneLine(execution.failureReason().orElse("(no reason recorded)")));
            return ExitCode.FAILED;
        }
        return ExitCode.OK;
    }

    /**
     * Puts the bundled example agent at {@code directory}/{@value #AGENT}, where the profile's relative command path
     * finds it from an agent working directory of {@code directory}. Rewritten only when its content differs, crash-safely
     * ({@link AtomicFiles#replace}), so a concurrent reader never sees half a file.
     */
    static Path installAgent(Path directory) {
        byte[] source = readResource(AGENT).getBytes(StandardCharsets.UTF_8);
        Path target = directory.resolve(AGENT);
        try {
            if (Files.isRegularFile(target) && Arrays.equals(Files.readAllBytes(target), source)) {
                return directory;
            }
            Files.createDirectories(target.getParent());
            AtomicFiles.replace(target, source);
            return directory;
        } catch (IOException e) {
            throw new UnavailableException(
                    "cannot put the example agent at " + target + ": " + e.getMessage() + "; check VIGILO_HOME", e);
        }
    }

    private static Path extractExample() {
        try (InputStream in = QuickstartCommand.class.getClassLoader().getResourceAsStream(EXAMPLE)) {
            if (in == null) {
                throw new IllegalStateException("the bundled example " + EXAMPLE + " is missing from this build");
            }
            Path tmp = Files.createTempFile("vigilo-quickstart-", ".jsonl");
            Files.write(tmp, in.readAllBytes());
            return tmp;
        } catch (IOException e) {
            throw new UnavailableException(
                    "cannot extract the example dataset to a temporary file: " + e.getMessage(), e);
        }
    }

    private static String readResource(String name) {
        try (InputStream in = QuickstartCommand.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("the bundled " + name + " is missing from this build");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UnavailableException("cannot read the bundled " + name + ": " + e.getMessage(), e);
        }
    }

    private static String sha256Hex(Path file) {
        try {
            return Sha256.of(Files.readAllBytes(file)).toHex();
        } catch (IOException e) {
            throw new UnavailableException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }
}
