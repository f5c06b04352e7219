package dev.vigilo.cli;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateDecision;
import dev.vigilo.exec.GateResult;
import dev.vigilo.plan.CreationLease;
import dev.vigilo.plan.PlanStatus;
import dev.vigilo.plan.RunStatus;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo run watch UUID}: follows a run until it ends. A run held by --prepare-only ends when its plan is ready
 * (exit 0) or rejected (exit 3); an executing run when it settles (exit 0 with the verdict passed, 1 with the verdict
 * failed or inconclusive, naming which and the gates on stderr), fails (1) or is cancelled (1). On a terminal the view is redrawn in place; otherwise each change is printed as one
 * JSON line (the keys of {@code run status --json}).
 */
@Command(
        name = "watch",
        mixinStandardHelpOptions = true,
        description = {
            "Follow a run live until it ends.",
            "Exit codes: 0 when it settles with the verdict passed (or, held by --prepare-only, when its plan is"
                    + " ready), 1 when it settles with the verdict failed or inconclusive (named on stderr with the"
                    + " gates), fails or is cancelled, 3 when its plan was rejected.",
            "On a terminal the view redraws in place; otherwise every change prints one JSON line."
        })
final class RunWatchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    IdParameters.Run runId;

    @Option(
            names = "--interval",
            paramLabel = "SECONDS",
            defaultValue = "1",
            description = "Seconds between polls (default ${DEFAULT-VALUE}).")
    double intervalSeconds;

    /** At least 10 ms and at most a day: 0, negatives and NaN would spin or never poll. */
    private Duration interval() {
        if (!(intervalSeconds >= 0.01 && intervalSeconds <= 86_400)) {
            throw new InvalidInputException("--interval must be between 0.01 and 86400 seconds, got " + intervalSeconds
                    + "; for example --interval 1");
        }
        return Duration.ofMillis(Math.round(intervalSeconds * 1000));
    }

    @Override
    public Integer call() {
        Duration interval = interval();
        UUID id = runId.id();
        PrintWriter out = CommandSupport.out(spec);
        boolean terminal = System.console() != null;
        String last = "";
        try (Connections connections = CommandSupport.root(spec).connections()) {
            while (true) {
                RunStatusCommand.Reading r = RunStatusCommand.read(connections, id);
                // Off a terminal, the lease countdown alone (which moves on every poll) is no change.
                String change = terminal
                        ? r.json()
                        : r.execution().mergeInto(withoutCountdown(r.run()).toJson());
                if (!change.equals(last)) {
                    last = change;
                    if (terminal) {
                        out.print("\033[H\033[2J");
                        r.print(out);
                    } else {
                        out.println(r.json());
                    }
                    out.flush();
                }
                if (r.ended()) {
                    return exitCode(r, CommandSupport.err(spec));
                }
                try {
                    Thread.sleep(interval.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return ExitCode.INTERRUPTED;
                }
            }
        }
    }

    /** The documented exit code of a run that ended, and one line on stderr saying why when it is not 0. */
    static int exitCode(RunStatusCommand.Reading r, PrintWriter err) {
        ExecutionStatus e = r.execution();
        UUID id = e.runId();
        switch (e.status()) {
            case "settled" -> {
                if (e.verdict().filter("passed"::equals).isPresent()) {
                    return ExitCode.OK;
                }
                String verdict = e.verdict().orElse("none");
                String failed = gates(e, GateDecision.FAILED);
                String inconclusive = gates(e, GateDecision.INCONCLUSIVE);
                String why = failed.isEmpty()
                        ? inconclusive
                        : inconclusive.isEmpty() ? failed : failed + "; inconclusive: " + inconclusive;
                err.println("vigilo: run " + id + " settled with verdict " + verdict + ": " + why);
                return ExitCode.FAILED;
            }
            case "failed" -> {
                err.println("vigilo: run " + id + " failed: "
                        + CommandSupport.oneLine(e.failureReason().orElse("(no reason recorded)")));
                return ExitCode.FAILED;
            }
            case "cancelled" -> {
                err.println("vigilo: run " + id + " was cancelled; `vigilo run results " + id
                        + "` lists what it committed");
                return ExitCode.FAILED;
            }
            default -> {
                if (r.run().creationProgress().planStatus() == PlanStatus.REJECTED) {
                    err.println("vigilo: run " + id + ": its plan was rejected: "
                            + CommandSupport.oneLine(r.run().rejection().orElse("(no reason recorded)")));
                    return ExitCode.INVALID_INPUT;
                }
                return ExitCode.OK; // held by --prepare-only with its plan ready
            }
        }
    }

    /** The gates of {@code e} that decided {@code d}, each with what it was decided on. */
    private static String gates(ExecutionStatus e, GateDecision d) {
        return e.gates().stream()
                .filter(g -> g.decision().equals(Optional.of(d)))
                .map(RunWatchCommand::describe)
                .collect(Collectors.joining(", "));
    }

    /**
     * {@code gate core 75.0% < 100.0%}; {@code gate math 95% CI [59.6%, 98.2%] holds 80.0% (62 cases at this rate
     * would decide it)}.
     */
    private static String describe(GateResult g) {
        String s = "gate " + g.name() + " " + ExecutionView.rule(g);
        if (g.decision().equals(Optional.of(GateDecision.INCONCLUSIVE))) {
            OptionalLong n = g.casesToDecide();
            s += n.isPresent()
                    ? " (" + n.getAsLong() + " cases at this rate would decide it, " + (n.getAsLong() - g.planned())
                            + " more)"
                    : " (no number of cases at this rate would decide it)";
        }
        return s;
    }

    /** The status with the lease's countdown fixed, so that only its expiry (moved by renewals) counts as a change. */
    static RunStatus withoutCountdown(RunStatus s) {
        return new RunStatus(
                s.runId(),
                s.status(),
                s.dispatchable(),
                s.creationProgress(),
                s.creationLease().map(l -> new CreationLease(l.expiresAt(), 1)),
                s.expectedChunks(),
                s.shards(),
                s.rejection());
    }
}
