package dev.vigilo.cli;

import dev.vigilo.agent.sandbox.Sandboxes;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.CreateResult;
import dev.vigilo.plan.Profile;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.plan.RunState;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code vigilo run create}: publishes an immutable, verified execution plan. */
@Command(
        name = "create",
        mixinStandardHelpOptions = true,
        description = {
            "Turn a finalized dataset and a profile into an immutable, verified execution plan.",
            "",
            "Publishes the plan, then admits it to the execution databases and returns `pending`: workers "
                    + "(`vigilo worker`) execute it. With --prepare-only the run is held in `creating` (plan_status "
                    + "ready, dispatchable false) until the same command is repeated without the flag. After an "
                    + "interruption, repeat the command with the same --run-id, profile, dataset and storage "
                    + "configuration: it resumes (a running worker also resumes a requested admission)."
        })
final class RunCreateCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = true, multiplicity = "1")
    ProfileSource profile;

    static final class ProfileSource {
        @Option(names = "--profile-file", paramLabel = "FILE", description = "The profile, a YAML or JSON file.")
        Path file;

        @Option(names = "--profile", paramLabel = "TEXT", description = "The profile inline, YAML or JSON.")
        String text;
    }

    @Option(
            names = "--dataset-upload-id",
            required = true,
            paramLabel = "ID",
            description = "The finalized dataset to run on (see `vigilo dataset list`).")
    String datasetUploadId;

    @Option(
            names = "--run-id",
            paramLabel = "UUID",
            description = "Choose the run id (keep it to resume after an interruption). Default: a new one.")
    String runId;

    @Option(names = "--prepare-only", description = "Publish the plan but hold the run (not dispatchable).")
    boolean prepareOnly;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        ProfileInput input = profile.file != null ? ProfileInput.file(profile.file) : ProfileInput.inline(profile.text);
        try (Connections connections = CommandSupport.root(spec).connections()) {
            CreateRequest request = new CreateRequest(
                    input,
                    CommandSupport.uploadId(datasetUploadId, "--dataset-upload-id"),
                    Optional.ofNullable(runId).map(id -> CommandSupport.runId(id, "--run-id")),
                    prepareOnly,
                    connections.execution().aliases());
            RunPreparation preparation =
                    new RunPreparation(connections.control().jdbi(), connections.storage());
            CreateResult prepared = Interruptible.run(() -> preparation.create(request));
            CreateResult result = prepared;
            if (prepared.executionRequested() && prepared.status() == RunState.CREATING) {
                Admission admission = new Admission(connections.placements(), connections.storage());
                Admission.Result admitted = Interruptible.run(() -> admission.admit(prepared.runId()));
                RunState now = RunState.fromSpelling(admitted.status());
                result = new CreateResult(
                        prepared.runId(),
                        now,
                        prepared.planStatus(),
                        now == RunState.PENDING || now == RunState.RUNNING,
                        true,
                        prepared.expectedChunks(),
                        prepared.cases(),
                        prepared.root(),
                        prepared.generation(),
                        prepared.filesWritten(),
                        prepared.filesReverified());
            }
            PrintWriter out = CommandSupport.out(spec);
            if (json.requested()) {
                json.printDocument(result.toJson());
            } else if (result.status() == RunState.CREATING && !result.executionRequested()) {
                out.printf(
                        "run %s %s: plan %s, %d chunks, %d cases; held by --prepare-only, repeat without it to "
                                + "request execution%n",
                        result.runId(),
                        result.status().spelling(),
                        result.planStatus().spelling(),
                        result.expectedChunks(),
                        result.cases());
            } else {
                out.printf(
                        "run %s %s: plan %s, %d chunks, %d cases%n",
                        result.runId(),
                        result.status().spelling(),
                        result.planStatus().spelling(),
                        result.expectedChunks(),
                        result.cases());
            }
            sandboxWarning(input, CommandSupport.root(spec).environment().variables())
                    .ifPresent(w -> {
                        PrintWriter err = CommandSupport.err(spec);
                        err.println(w);
                        err.flush();
                    });
        }
        return ExitCode.OK;
    }

    /**
     * A warning when the profile's sandbox needs a program this machine does not have: the run's workers need it
     * (each checks it when it starts the run), and this machine is often one of them.
     */
    static Optional<String> sandboxWarning(ProfileInput input, Map<String, String> variables) {
        Profile.SandboxKind kind = input.parse().sandbox().kind();
        if (kind == Profile.SandboxKind.NONE) {
            return Optional.empty();
        }
        String program = kind == Profile.SandboxKind.BWRAP ? "bwrap" : "podman";
        if (Sandboxes.find(program, variables).isPresent()) {
            return Optional.empty();
        }
        return Optional.of("vigilo: warning: sandbox.kind " + kind.wire() + " needs " + program + " on every worker's"
                + " PATH, and it is not installed here; install it where the workers run (Debian: apt-get install "
                + (kind == Profile.SandboxKind.BWRAP ? "bubblewrap" : "podman") + ")");
    }
}
