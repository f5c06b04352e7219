package dev.vigilo.cli;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.review.RunReviews;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.plan.RunStatusReader;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo run review RUN_ID CASE --outcome pass|fail --note TEXT [--reviewer NAME]} and {@code vigilo run
 * reviews RUN_ID} (docs/execution.md, "Human review"): records a reviewer's override of one case's outcome, or lists
 * a run's overrides with the gate table recomputed beside the machine one. Thin: parses, calls exec's
 * {@link RunReviews}, prints.
 */
final class RunReviewCommand {
    private RunReviewCommand() {}

    /** The ordinal a CASE parameter names (a non-negative integer, as the case pages' addresses give it). */
    static long ordinal(String text) {
        try {
            long n = Long.parseLong(text);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // the message below says what is expected
        }
        throw new InvalidInputException("CASE: " + CommandSupport.oneLine(String.valueOf(text)) + " is not a case"
                + " ordinal; give the case's ordinal (a number from 0, as `vigilo run results` and the case page"
                + " show it)");
    }

    /** {@code vigilo run review}. */
    @Command(
            name = "review",
            mixinStandardHelpOptions = true,
            description = {
                "Override the outcome of one executed case (pass or fail) with a note: an auditable record (who, when,"
                        + " why, the original outcome kept) in the control database and the run's store.",
                "A later override of the same case supersedes it (the history stays). The run's recorded gate table"
                        + " and verdict do not change: `vigilo run reviews` and `vigilo run status` show the figures"
                        + " recomputed with the overrides beside them; `vigilo verify` checks the records."
            })
    static final class Review implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        IdParameters.Run runId;

        @Parameters(index = "1", paramLabel = "CASE", description = "The case's ordinal in the run.")
        String caseText;

        @Option(
                names = "--outcome",
                required = true,
                paramLabel = "pass|fail",
                description = "What the reviewer decides the case is.")
        String outcome;

        @Option(names = "--note", required = true, paramLabel = "TEXT", description = "Why (1 to 4,000 characters).")
        String note;

        @Option(
                names = "--reviewer",
                paramLabel = "NAME",
                description = "Who reviews (recorded as given; default: the operating-system user).")
        String reviewer;

        @Mixin
        JsonOption json;

        @Override
        public Integer call() {
            UUID id = runId.id();
            long ordinal = ordinal(caseText);
            RunReviews.Verdict verdict;
            try {
                verdict = RunReviews.Verdict.parse(outcome);
            } catch (InvalidInputException e) {
                throw new InvalidInputException("--outcome: " + e.getMessage());
            }
            String who = reviewer != null ? reviewer : System.getProperty("user.name", "");
            try (Connections connections = CommandSupport.root(spec).connections()) {
                new RunStatusReader(connections.control().jdbi()).status(id); // unknown run: exit 3, nothing written
                try (RunReviews reviews = new RunReviews(connections.placements(), connections.storage())) {
                    RunReviews.CaseOverride o = reviews.record(id, ordinal, verdict, who, note);
                    if (json.requested()) {
                        json.print(json(o));
                    } else {
                        CommandSupport.out(spec)
                                .printf(
                                        "case %d (%s) of run %s: %s overridden to %s by %s (override %d%s); the"
                                                + " recorded verdict stays, `vigilo run reviews %s` shows the"
                                                + " reviewed figures%n",
                                        o.ordinal(),
                                        CommandSupport.oneLine(o.caseId()),
                                        id,
                                        o.original(),
                                        o.outcome().spelling(),
                                        CommandSupport.oneLine(o.reviewer()),
                                        o.seq(),
                                        o.supersedes().isPresent()
                                                ? ", superseding override "
                                                        + o.supersedes().getAsLong()
                                                : "",
                                        id);
                    }
                }
            }
            return ExitCode.OK;
        }
    }

    /** {@code vigilo run reviews}. */
    @Command(
            name = "reviews",
            mixinStandardHelpOptions = true,
            description = {
                "List a run's review overrides (superseded ones included, stale ones marked) and, when there is"
                        + " any, the gate table recomputed with the overrides in force beside the machine one."
            })
    static final class Reviews implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        IdParameters.Run runId;

        @Mixin
        JsonOption json;

        @Override
        public Integer call() {
            UUID id = runId.id();
            try (Connections connections = CommandSupport.root(spec).connections()) {
                new RunStatusReader(connections.control().jdbi()).status(id);
                List<GateResult> machine = new ExecutionStatusReader(connections.placements())
                        .status(id)
                        .gates();
                try (RunReviews reviews = new RunReviews(connections.placements(), connections.storage())) {
                    List<RunReviews.CaseOverride> all = reviews.list(id);
                    Optional<RunReviews.Reviewed> gates = reviews.gates(id, machine);
                    if (json.requested()) {
                        Map<String, Object> m = new LinkedHashMap<>();
                        m.put("run_id", id.toString());
                        m.put(
                                "overrides",
                                all.stream().map(RunReviewCommand::json).toList());
                        m.put("reviewed", gates.map(RunReviewCommand::json).orElse(null));
                        json.print(m);
                        return ExitCode.OK;
                    }
                    PrintWriter out = CommandSupport.out(spec);
                    if (all.isEmpty()) {
                        out.printf(
                                "run %s has no review overrides (`vigilo run review %s CASE --outcome pass|fail"
                                        + " --note TEXT` records one)%n",
                                id, id);
                        return ExitCode.OK;
                    }
                    for (RunReviews.CaseOverride o : all) {
                        out.printf(
                                "%d  case %d (%s): %s -> %s by %s at %s%s%s: %s%n",
                                o.seq(),
                                o.ordinal(),
                                CommandSupport.oneLine(o.caseId()),
                                o.original(),
                                o.outcome().spelling(),
                                CommandSupport.oneLine(o.reviewer()),
                                o.at(),
                                o.current() ? "" : " (superseded)",
                                o.current() && o.stale()
                                        ? " (STALE: the case was executed again; review it again)"
                                        : "",
                                CommandSupport.oneLine(o.note()));
                    }
                    gates.ifPresent(r -> printReviewed(out, r));
                }
            }
            return ExitCode.OK;
        }
    }

    /** The reviewed gate table under the machine one, with the verdicts side by side. */
    static void printReviewed(PrintWriter out, RunReviews.Reviewed r) {
        out.printf(
                "reviewed gate table (%d override%s applied%s; the recorded verdict is the machine's):%n",
                r.applied(), r.applied() == 1 ? "" : "s", r.stale() > 0 ? ", " + r.stale() + " stale not applied" : "");
        ExecutionView.printGates(out, r.reviewed());
        out.println("reviewed verdict: "
                + r.reviewedVerdict().map(v -> v.spelling()).orElse("not yet"));
    }

    static Map<String, Object> json(RunReviews.CaseOverride o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("seq", o.seq());
        m.put("ordinal", o.ordinal());
        m.put("case_id", o.caseId());
        m.put("outcome", o.outcome().spelling());
        m.put("original", o.original());
        m.put("reviewer", o.reviewer());
        m.put("note", o.note());
        m.put("at", o.at().toString());
        m.put("supersedes", o.supersedes().isPresent() ? o.supersedes().getAsLong() : null);
        m.put("current", o.current());
        m.put("stale", o.stale());
        m.put("record_key", o.recordKey());
        m.put("record_sha256", o.recordSha256());
        return m;
    }

    static Map<String, Object> json(RunReviews.Reviewed r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("applied", r.applied());
        m.put("stale", r.stale());
        m.put("verdict", r.reviewedVerdict().map(v -> v.spelling()).orElse(null));
        m.put(
                "gates",
                r.reviewed().stream()
                        .map(g -> {
                            Map<String, Object> x = new LinkedHashMap<>();
                            x.put("name", g.name());
                            x.put("planned", g.planned());
                            x.put("passed", g.passed());
                            x.put("failed", g.failed());
                            x.put("errored", g.errored());
                            x.put("pass_rate", g.passRate());
                            x.put("ci_low", g.interval().low());
                            x.put("ci_high", g.interval().high());
                            x.put(
                                    "decision",
                                    g.decision().map(d -> d.spelling()).orElse(null));
                            return x;
                        })
                        .toList());
        return m;
    }
}
