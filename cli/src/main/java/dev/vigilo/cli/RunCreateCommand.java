package dev.vigilo.cli;

import dev.vigilo.agent.sandbox.Sandboxes;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.Names;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.CreateResult;
import dev.vigilo.plan.GroupProfiles;
import dev.vigilo.plan.Profile;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunGroups;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.plan.RunState;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
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

    @Option(
            names = "--agents",
            paramLabel = "FILE",
            description = "A run group: one run per agent definition of FILE (agents: [{name, agent}]), each the"
                    + " profile with its agent section replaced (docs/run-preparation.md, \"Run groups\").")
    Path agents;

    @Option(
            names = "--group",
            paramLabel = "NAME",
            description = "The run group's name (with --agents; default: the profile's name). Repeat the same command"
                    + " to finish a group whose creation was interrupted.")
    String group;

    @Option(
            names = "--label",
            paramLabel = "TEXT",
            description = "A label shown after the profile's name wherever the run is named (runs list, run page,"
                    + " titles, matrix), printable characters only; a repeat may leave it out but not change it.")
    String label;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        ProfileInput input = profile.file != null ? ProfileInput.file(profile.file) : ProfileInput.inline(profile.text);
        if (agents != null) {
            if (label != null) {
                throw new InvalidInputException(
                        "--label names one run; a run group's runs are named by their agents (--group NAME names the group)");
            }
            return createGroup(input);
        }
        Optional<String> runLabel = Optional.ofNullable(label).map(l -> Names.label(l, "--label"));
        if (group != null) {
            throw new InvalidInputException("--group names a run group: give it with --agents FILE");
        }
        try (Connections connections = CommandSupport.root(spec).connections()) {
            CreateResult result = create(
                    connections,
                    input,
                    CommandSupport.uploadId(datasetUploadId, "--dataset-upload-id"),
                    Optional.ofNullable(runId).map(id -> CommandSupport.runId(id, "--run-id")),
                    prepareOnly,
                    runLabel);
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
     * Prepares one run and, unless held by {@code --prepare-only}, admits it: what {@code run create} does for a run
     * and for each member of a group. Repeating it with the same run id resumes it.
     */
    static CreateResult create(
            Connections connections, ProfileInput input, UUID dataset, Optional<UUID> runId, boolean prepareOnly) {
        return create(connections, input, dataset, runId, prepareOnly, Optional.empty());
    }

    /** As above, the run labelled {@code label} ({@code --label}). */
    static CreateResult create(
            Connections connections,
            ProfileInput input,
            UUID dataset,
            Optional<UUID> runId,
            boolean prepareOnly,
            Optional<String> label) {
        CreateRequest request = new CreateRequest(
                input, dataset, runId, prepareOnly, connections.execution().aliases(), label);
        RunPreparation preparation = new RunPreparation(connections.control().jdbi(), connections.storage());
        CreateResult prepared = Interruptible.run(() -> preparation.create(request));
        if (!(prepared.executionRequested() && prepared.status() == RunState.CREATING)) {
            return prepared;
        }
        Admission admission = new Admission(connections.placements(), connections.storage());
        Admission.Result admitted = Interruptible.run(() -> admission.admit(prepared.runId()));
        RunState now = RunState.fromSpelling(admitted.status());
        return new CreateResult(
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

    /**
     * {@code run create --agents FILE}: every member's profile is built and validated first (nothing is written for a
     * bad agents file, a repeated name or an agent that fails validation); then the group and its members' run ids
     * are recorded in one transaction; then each member's run is created in order; then the group is marked complete.
     * A command killed in between leaves the group recorded and incomplete; repeating it creates or resumes the runs
     * still missing (docs/run-preparation.md, "Run groups").
     */
    private Integer createGroup(ProfileInput input) {
        if (runId != null) {
            throw new InvalidInputException("--run-id names one run; a group's runs get their ids from the group (leave"
                    + " --run-id out with --agents)");
        }
        UUID dataset = CommandSupport.uploadId(datasetUploadId, "--dataset-upload-id");
        GroupProfiles.Expansion expansion = GroupProfiles.expand(input, agents);
        String name = RunGroups.checkName(group != null ? group : expansion.baseName());
        try (Connections connections = CommandSupport.root(spec).connections()) {
            // The dataset must exist before the group is recorded: a group never names a dataset no run can use.
            new DatasetCatalog(connections.control().jdbi()).get(dataset);
            RunGroups groups = new RunGroups(connections.control().jdbi());
            RunGroups.Group g = groups.record(
                    name,
                    dataset,
                    expansion.profilesSha256(),
                    expansion.members().stream()
                            .map(GroupProfiles.Member::agentName)
                            .toList());
            List<CreateResult> results = new ArrayList<>();
            for (int i = 0; i < g.members().size(); i++) {
                GroupProfiles.Member m = expansion.members().get(i);
                RunGroups.Member member = g.members().get(i);
                results.add(create(
                        connections, ProfileInput.inline(m.text()), dataset, Optional.of(member.runId()), prepareOnly));
            }
            groups.complete(g.groupId());
            PrintWriter out = CommandSupport.out(spec);
            if (json.requested()) {
                java.util.Map<String, Object> o = new java.util.LinkedHashMap<>();
                o.put("group_id", g.groupId().toString());
                o.put("name", g.name());
                o.put("dataset_upload_id", dataset.toString());
                List<Object> runs = new ArrayList<>();
                for (int i = 0; i < results.size(); i++) {
                    java.util.Map<String, Object> r = new java.util.LinkedHashMap<>();
                    r.put("agent", g.members().get(i).agentName());
                    r.put("run", readJson(results.get(i).toJson()));
                    runs.add(r);
                }
                o.put("runs", runs);
                json.print(o);
            } else {
                out.printf("group %s (%s): %d runs%n", g.name(), g.groupId(), results.size());
                for (int i = 0; i < results.size(); i++) {
                    CreateResult r = results.get(i);
                    out.printf(
                            "  %s: run %s %s: plan %s, %d chunks, %d cases%n",
                            g.members().get(i).agentName(),
                            r.runId(),
                            r.status().spelling(),
                            r.planStatus().spelling(),
                            r.expectedChunks(),
                            r.cases());
                }
                out.printf("follow it with `vigilo run status %s`%n", g.name());
            }
            PrintWriter err = CommandSupport.err(spec);
            for (GroupProfiles.Member m : expansion.members()) {
                sandboxWarning(
                                ProfileInput.inline(m.text()),
                                CommandSupport.root(spec).environment().variables())
                        .ifPresent(err::println);
            }
            err.flush();
        }
        return ExitCode.OK;
    }

    private static com.fasterxml.jackson.databind.JsonNode readJson(String text) {
        try {
            return Json.read(text);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("unreadable JSON from the plan module: " + e.getMessage(), e);
        }
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
