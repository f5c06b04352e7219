package dev.vigilo.cli;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.plan.CreationLease;
import dev.vigilo.plan.PlanStatus;
import dev.vigilo.plan.RunStatus;
import dev.vigilo.plan.RunStatusReader;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo run watch UUID}: follows creation progress until the plan is ready (exit 0) or rejected (exit 3).
 * On a terminal the view is redrawn in place; otherwise each change is printed as one JSON line.
 */
@Command(
        name = "watch",
        mixinStandardHelpOptions = true,
        description = {
            "Follow a run's creation progress live until its plan is ready (exit 0) or rejected (exit 3).",
            "On a terminal the view redraws in place; otherwise every change prints one JSON line."
        })
final class RunWatchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "RUN_ID", description = "The run id.")
    String runId;

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
        PrintWriter out = CommandSupport.out(spec);
        boolean terminal = System.console() != null;
        String[] last = {""};
        try (Connections connections = CommandSupport.root(spec).connections()) {
            RunStatusReader reader = new RunStatusReader(connections.control().jdbi());
            RunStatus end;
            try {
                end = reader.watch(CommandSupport.runId(runId, "RUN_ID"), interval, s -> {
                    String json = s.toJson();
                    // Off a terminal, the lease countdown alone (which moves on every poll) is no change.
                    String change = terminal ? json : withoutCountdown(s).toJson();
                    if (change.equals(last[0])) {
                        return;
                    }
                    last[0] = change;
                    if (terminal) {
                        out.print("\033[H\033[2J");
                        RunStatusCommand.print(out, s);
                    } else {
                        out.println(json);
                    }
                    out.flush();
                });
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return ExitCode.INTERRUPTED;
            }
            return end.creationProgress().planStatus() == PlanStatus.REJECTED ? ExitCode.INVALID_INPUT : ExitCode.OK;
        }
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
