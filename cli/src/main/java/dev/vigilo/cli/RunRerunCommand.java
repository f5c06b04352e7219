package dev.vigilo.cli;

import dev.vigilo.exec.settlement.RunRerun;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo run rerun-errors RUN_ID [--dry-run] [--json]} (docs/execution.md, "Rerun errors"): lists the errored
 * cases of a settled or failed run by error type, and without {@code --dry-run} reopens the run so workers execute
 * only those again ({@link RunRerun}).
 */
@Command(
        name = "rerun-errors",
        mixinStandardHelpOptions = true,
        description = {
            "Execute again only the errored cases (or epochs) of a settled or failed run: agent errors, judge and"
                    + " evaluator errors, limits, timeouts (and the cases of failed chunks). Passed and failed cases"
                    + " keep their results; the run settles again once workers have run them.",
            "--dry-run lists what would run again, by error type, and changes nothing. A run without errored cases"
                    + " says so (exit 0); a run not ended, or cancelled, is refused (exit 4); an unknown run exits 3."
        })
final class RunRerunCommand implements Callable<Integer> {
    /** Cases the text form names per error type; the rest are counted ({@code --json} lists every case). */
    static final int NAMED = 10;

    @Spec
    CommandSpec spec;

    @Mixin
    IdParameters.Run runId;

    @Option(names = "--dry-run", description = "List what would run again, by error type; change nothing.")
    boolean dryRun;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        try (Connections connections = CommandSupport.root(spec).connections()) {
            RunRerun rerun = new RunRerun(connections.placements(), connections.storage());
            RunRerun.Plan plan;
            String outcome;
            if (dryRun) {
                plan = rerun.plan(runId.id());
                outcome = plan.empty() ? "nothing_to_rerun" : "would_rerun";
            } else {
                RunRerun.Result r = rerun.rerun(runId.id());
                plan = r.plan();
                outcome = r.outcome() == RunRerun.Outcome.REOPENED ? "reopened" : "nothing_to_rerun";
            }
            if (json.requested()) {
                json.print(json(plan, outcome));
            } else {
                text(CommandSupport.out(spec), plan, outcome);
            }
        }
        return ExitCode.OK;
    }

    private static Map<String, Object> json(RunRerun.Plan plan, String outcome) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("run_id", plan.runId().toString());
        m.put("outcome", outcome);
        m.put("status", plan.status().spelling());
        m.put("generation", plan.generation());
        m.put("chunks", plan.chunks().size());
        m.put("cases", plan.cases().size());
        Map<String, Object> byType = new LinkedHashMap<>();
        plan.byType().forEach((type, cases) -> {
            List<Map<String, Object>> list = new ArrayList<>();
            for (RunRerun.Case c : cases) {
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("ordinal", c.ordinal());
                x.put("id", c.id());
                x.put("chunk", c.chunk());
                x.put("epochs", c.epochs());
                x.put("message", c.message());
                list.add(x);
            }
            byType.put(type, list);
        });
        m.put("by_type", byType);
        return m;
    }

    private static void text(PrintWriter out, RunRerun.Plan plan, String outcome) {
        if (plan.empty()) {
            out.printf(
                    "run %s (%s) has no errored case: nothing to rerun%n",
                    plan.runId(), plan.status().spelling());
            out.flush();
            return;
        }
        String head = outcome.equals("reopened")
                ? "run %s reopened: %d errored cases in %d chunks run again (settlement generation %d); a worker runs"
                        + " them, then the run settles again%n"
                : "run %s: %d errored cases in %d chunks would run again (settlement generation %d); nothing"
                        + " changed%n";
        out.printf(head, plan.runId(), plan.cases().size(), plan.chunks().size(), plan.generation());
        plan.byType().forEach((type, cases) -> {
            List<String> named = new ArrayList<>();
            for (int i = 0; i < Math.min(NAMED, cases.size()); i++) {
                RunRerun.Case c = cases.get(i);
                named.add(
                        type.equals(RunRerun.CHUNK_FAILED)
                                ? "chunk " + c.chunk()
                                : c.id() + (c.epochs().isEmpty() ? "" : " (epochs " + c.epochs() + ")"));
            }
            out.printf(
                    "  %s: %d: %s%s%n",
                    type,
                    cases.size(),
                    String.join(", ", named),
                    cases.size() > NAMED ? " and " + (cases.size() - NAMED) + " more" : "");
        });
        out.flush();
    }
}
