package dev.vigilo.cli;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.settlement.RunPause;
import dev.vigilo.plan.RunStatusReader;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo run pause UUID} and {@code vigilo run resume UUID} (docs/execution.md, "Pause and resume"): the run
 * state changes in the control database ({@link RunPause}), then each execution database this process reaches marks
 * or clears the run's shards. The two commands are one class: they differ only in the call and the words.
 */
final class RunPauseCommand {
    private RunPauseCommand() {}

    @Command(
            name = "pause",
            mixinStandardHelpOptions = true,
            description = {
                "Pause a pending or running run: workers claim none of its chunks until `vigilo run resume`; the chunks"
                        + " they hold finish and count. Committed results stay.",
                "With --now, workers also interrupt the chunks they hold of the run (at their next heartbeat, within"
                        + " 15 s) and give them back: nothing of them counts and no attempt is used; after resume they"
                        + " run again. --now on a run already paused makes its pause interrupt.",
                "Pausing again says it is already paused (exit 0); a run being created or already ended has nothing"
                        + " to pause (exit 4).",
                "When an execution database cannot be reached, the run is still paused (no worker is dispatched to"
                        + " it); the command exits 5 and repeating it finishes the pause there."
            })
    static final class Pause implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        IdParameters.Run runId;

        @Option(
                names = "--now",
                description = "interrupt the chunks workers hold of the run and give them back (they run again after"
                        + " resume)")
        boolean now;

        @Override
        public Integer call() {
            return change(spec, runId.id(), true, now, RunPause.Raise.NONE);
        }
    }

    @Command(
            name = "resume",
            mixinStandardHelpOptions = true,
            description = {
                "Resume a paused run: workers claim its chunks again (start one with `vigilo worker` if none runs).",
                "--budget-usd N and --budget-tokens N raise the run's budget to the new total N first; a run paused"
                        + " for its budget resumes only with one (otherwise exit 4), and a total that does not exceed"
                        + " the limit in force, or a run without a budget, exits 3.",
                "Resuming a pending or running run changes nothing (exit 0); a run being created or already ended"
                        + " cannot be resumed (exit 4).",
                "When an execution database cannot be reached, the command exits 5; repeat it to finish there."
            })
    static final class Resume implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        IdParameters.Run runId;

        @Option(
                names = "--budget-usd",
                paramLabel = "N",
                description = "raise the run's cost budget to N USD (a total)")
        String budgetUsdText;

        @Option(
                names = "--budget-tokens",
                paramLabel = "N",
                description = "raise the run's token budget to N tokens (a total)")
        Long budgetTokens;

        /** {@code --budget-usd} as an exact decimal; anything else is a one-line error (exit 3). */
        private BigDecimal budgetUsd() {
            if (budgetUsdText == null) {
                return null;
            }
            try {
                return new BigDecimal(budgetUsdText.strip());
            } catch (NumberFormatException e) {
                throw new InvalidInputException("--budget-usd " + CommandSupport.shown(budgetUsdText)
                        + ": not a number; give the new total in USD, e.g. --budget-usd 40");
            }
        }

        @Override
        public Integer call() {
            BigDecimal budgetUsd = budgetUsd();
            if (budgetUsd != null && budgetUsd.signum() <= 0) {
                throw new InvalidInputException(
                        "--budget-usd " + budgetUsd.toPlainString() + ": a budget is a total greater than 0");
            }
            if (budgetTokens != null && budgetTokens <= 0) {
                throw new InvalidInputException(
                        "--budget-tokens " + budgetTokens + ": a budget is a total greater than 0");
            }
            return change(
                    spec,
                    runId.id(),
                    false,
                    false,
                    new RunPause.Raise(Optional.ofNullable(budgetUsd), Optional.ofNullable(budgetTokens)));
        }
    }

    private static int change(CommandSpec spec, UUID id, boolean pause, boolean now, RunPause.Raise raise) {
        String verb = pause ? "pause" : "resume";
        PrintWriter out = CommandSupport.out(spec);
        try (Connections connections = CommandSupport.root(spec).connections()) {
            // An unknown run is refused before any execution database is opened.
            new RunStatusReader(connections.control().jdbi()).status(id);
            Connections.Reachable reach = connections.reachablePlacements();
            if (reach.placements().isEmpty()) {
                throw new UnavailableException("run " + id + " was not " + verb + "d: no execution database of "
                        + connections.execution().source() + " can be reached ("
                        + String.join("; ", reach.unreachable().values()) + "); check them and repeat the command");
            }
            RunPause runs = new RunPause(reach.placements().get());
            RunPause.Result r = pause
                    ? runs.pause(id, now ? RunPause.BY_COMMAND_NOW : RunPause.BY_COMMAND, now)
                    : runs.resume(id, raise);
            List<String> unreachable = new ArrayList<>(r.unreachable());
            reach.unreachable().forEach((alias, why) -> {
                if (r.placements().contains(alias)) {
                    unreachable.add(why);
                }
            });
            switch (r.outcome()) {
                case PAUSED ->
                    out.printf(
                            "run %s paused: workers claim none of its chunks; %s. `vigilo run resume %s` continues it%n",
                            id,
                            now
                                    ? "those they hold are interrupted and given back (they run again after resume)"
                                    : "those they hold finish",
                            id);
                case ALREADY_PAUSED ->
                    out.printf(
                            "run %s is already paused%s%n",
                            id, now ? "; workers interrupt the chunks they hold of it and give them back" : "");
                case RESUMED ->
                    out.printf(
                            "run %s resumed (%s): workers claim its chunks again%n",
                            id, r.status().spelling());
                case NOT_PAUSED ->
                    out.printf("run %s is not paused (%s)%n", id, r.status().spelling());
            }
            out.flush();
            if (!unreachable.isEmpty()) {
                throw new UnavailableException("run " + id + " is " + r.status().spelling() + ", but its shards could"
                        + " not be " + (pause ? "marked paused" : "cleared") + " in " + String.join("; ", unreachable)
                        + "; repeat `vigilo run " + verb + " " + id + "` when the database is back");
            }
        }
        return ExitCode.OK;
    }
}
