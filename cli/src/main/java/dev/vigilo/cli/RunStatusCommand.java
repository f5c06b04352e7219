package dev.vigilo.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.input.Names;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.review.RunReviews;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.view.RunCatalog;
import dev.vigilo.plan.PlanStatus;
import dev.vigilo.plan.RunGroups;
import dev.vigilo.plan.RunState;
import dev.vigilo.plan.RunStatus;
import dev.vigilo.plan.RunStatusReader;
import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code vigilo run status UUID}. */
@Command(
        name = "status",
        mixinStandardHelpOptions = true,
        description = {
            "Show a run's status, creation progress, planned shards and, once admitted, its execution progress,"
                    + " verdict and gate table.",
            "--json keeps the preparation keys and adds execution, verdict, gates, gates_final and failure_reason"
                    + " (docs/cli.md).",
            "Given a run group's name or id instead (`run create --agents`), one line per member run: agent, run,"
                    + " status, verdict, each gate's pass rate and cost."
        })
final class RunStatusCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    IdParameters.Run runId;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        String text = runId.text;
        boolean looksLikeId = text != null && CANONICAL.matcher(text).matches();
        try (Connections connections = CommandSupport.root(spec).connections()) {
            RunGroups groups = new RunGroups(connections.control().jdbi());
            if (!looksLikeId) {
                // Not a run id: a run group's name (docs/cli.md, "run status GROUP").
                if (groups.exists(text)) {
                    return group(connections, groups.get(text));
                }
                if (!ID_LIKE.matcher(text).matches()) {
                    throw new NotFoundException(
                            "no run group "
                                    + Names.quote(text) + ", and it is not a run id; give a run id"
                                    + " (printed by `vigilo run create`) or a run group's name (`vigilo run groups` lists them)");
                }
                // Hex digits and dashes but not a canonical run id, nor a group: the run id's own refusal says what a
                // run id looks like; it also names the other choice.
                try {
                    runId.id();
                } catch (dev.vigilo.common.errors.InvalidInputException e) {
                    throw new dev.vigilo.common.errors.InvalidInputException(
                            e.getMessage() + "; or give the name of a run group (`vigilo run groups` lists them)");
                }
            }
            UUID id = runId.id();
            Reading r;
            try {
                r = read(connections, id);
            } catch (dev.vigilo.common.errors.NotFoundException e) {
                // No run of that id: perhaps a group's id.
                if (groups.exists(text)) {
                    return group(connections, groups.get(text));
                }
                throw e;
            }
            PrintWriter out = CommandSupport.out(spec);
            if (json.requested()) {
                json.printDocument(r.json());
            } else {
                r.print(out);
            }
        }
        return ExitCode.OK;
    }

    /** What a mistyped run id looks like: hex digits and dashes only. */
    private static final java.util.regex.Pattern ID_LIKE = java.util.regex.Pattern.compile("[0-9a-fA-F-]+");

    private static final java.util.regex.Pattern CANONICAL =
            java.util.regex.Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

    /** A run group's summary: one line per member, or its document with {@code --json}. */
    private int group(Connections connections, RunGroups.Group g) {
        List<GroupStatus.Line> lines = GroupStatus.read(connections, g);
        if (json.requested()) {
            json.print(GroupStatus.json(g, lines));
        } else {
            PrintWriter out = CommandSupport.out(spec);
            GroupStatus.print(out, g, lines);
            out.flush();
        }
        return ExitCode.OK;
    }

    /**
     * One reading of a run: its preparation status and its execution status, read one after the other, and the
     * earlier settlements of a run that reran its errors (docs/execution.md, "Rerun errors"; empty otherwise).
     */
    record Reading(
            RunStatus run,
            ExecutionStatus execution,
            boolean executionRequested,
            List<RunCatalog.EarlierSettlement> reruns,
            Optional<RunReviews.Reviewed> reviewed) {
        /** The preparation status with the state read together with the execution fields. */
        RunStatus current() {
            return withState(run, RunState.fromSpelling(execution.status()));
        }

        /** {@code run status --json}: the preparation keys, then the execution keys. */
        String json() {
            String merged = execution.mergeInto(run.toJson());
            if (reruns.isEmpty() && reviewed.isEmpty()) {
                return merged; // a run never rerun nor reviewed: the document is unchanged
            }
            try {
                ObjectNode o = (ObjectNode) Json.read(merged);
                if (reviewed.isPresent()) {
                    o.set("reviewed", Json.read(Json.write(RunReviewCommand.json(reviewed.get()))));
                }
                if (reruns.isEmpty()) {
                    return Json.write(o);
                }
                ArrayNode a = o.putArray("reruns");
                for (RunCatalog.EarlierSettlement e : reruns) {
                    ObjectNode x = a.addObject()
                            .put("generation", e.generation())
                            .put("status", e.status())
                            .put("verdict", e.verdict().orElse(null))
                            .put("rerun_cases", e.rerunCases());
                    ObjectNode byType = x.putObject("rerun_by_type");
                    e.rerunByType().forEach((type, cases) -> byType.put(type, cases.size()));
                }
                return Json.write(o);
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalStateException("cannot add the rerun history to the status document", e);
            }
        }

        void print(PrintWriter out) {
            RunStatusCommand.print(out, current());
            if (run.creationProgress().planStatus() != PlanStatus.REJECTED) {
                ExecutionView.print(out, execution, executionRequested);
            }
            reviewed.ifPresent(r -> RunReviewCommand.printReviewed(out, r));
            for (RunCatalog.EarlierSettlement e : reruns) {
                List<String> types = new java.util.ArrayList<>();
                e.rerunByType().forEach((type, cases) -> types.add(type + " " + cases.size()));
                out.printf(
                        "earlier settlement %d: %s%s; %d errored cases run again (%s)%n",
                        e.generation(),
                        e.status(),
                        e.verdict().map(v -> ", verdict " + v).orElse(""),
                        e.rerunCases(),
                        String.join(", ", types));
            }
        }

        /** Whether a {@code run watch} ends here: a terminal state, a rejected plan, or a plan held by --prepare-only. */
        boolean ended() {
            PlanStatus plan = run.creationProgress().planStatus();
            return execution.finished()
                    || plan == PlanStatus.REJECTED
                    || (current().status() == RunState.CREATING && plan == PlanStatus.READY && !executionRequested);
        }
    }

    /**
     * Reads the run: preparation status first (an unknown run is refused before any execution database is opened),
     * then its execution status.
     */
    static Reading read(Connections connections, UUID id) {
        RunStatusReader reader = new RunStatusReader(connections.control().jdbi());
        RunStatus status = reader.status(id);
        boolean requested = reader.executionRequested(id);
        ExecutionStatus execution = new ExecutionStatusReader(connections.placements()).status(id);
        Optional<RunReviews.Reviewed> reviewed;
        try (RunReviews reviews = new RunReviews(connections.placements(), connections.storage())) {
            reviewed = reviews.gates(id, execution.gates());
        }
        return new Reading(
                status, execution, requested, new RunCatalog(connections.placements()).history(id), reviewed);
    }

    static RunStatus withState(RunStatus s, RunState state) {
        return new RunStatus(
                s.runId(),
                state,
                s.dispatchable(),
                s.creationProgress(),
                s.creationLease(),
                s.expectedChunks(),
                s.shards(),
                s.rejection());
    }

    static void print(PrintWriter out, RunStatus s) {
        out.printf("run %s: %s%s%n", s.runId(), s.status().spelling(), s.dispatchable() ? " (dispatchable)" : "");
        out.printf(
                "plan: %s, %d of %d chunks acknowledged%n",
                s.creationProgress().planStatus().spelling(),
                s.creationProgress().planChunkCursor(),
                s.expectedChunks());
        if (s.creationLease().isPresent()) {
            out.println("creation lease: held by a creator, "
                    + s.creationLease().get().describe());
        } else if (s.status() == RunState.CREATING && s.creationProgress().planStatus() == PlanStatus.PREPARING) {
            out.println("creation lease: free; repeat `vigilo run create` with this run id to resume preparation");
        }
        s.rejection().ifPresent(r -> out.println("rejected: " + r));
        if (!s.shards().isEmpty()) {
            out.printf("%5s  %10s  %8s  %s%n", "SHARD", "CASES", "CHUNKS", "GATES (planned cases)");
            for (RunStatus.Shard shard : s.shards()) {
                out.printf("%5d  %10d  %8d  %s%n", shard.shard(), shard.cases(), shard.chunks(), shard.gates());
            }
        }
    }
}
