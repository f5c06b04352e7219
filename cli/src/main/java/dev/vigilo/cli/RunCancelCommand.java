package dev.vigilo.cli;

import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.settlement.RunCancellation;
import dev.vigilo.plan.RunStatusReader;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo run cancel UUID} (docs/execution.md, "Cancellation"): ends every authority over the run in one control
 * transaction, then closes its shards in each execution database this process reaches. Committed results stay.
 */
@Command(
        name = "cancel",
        mixinStandardHelpOptions = true,
        description = {
            "Cancel a run: no more admission, claims or completions; a delayed creator cannot reopen it.",
            "Committed results and dataset and plan objects stay (`vigilo run results`). Cancelling again says it"
                    + " is already cancelled (exit 0); a settled or failed run has nothing to cancel (exit 4).",
            "When an execution database cannot be reached, the run is still cancelled (workers stop at their next"
                    + " heartbeat); the command exits 5 and repeating it closes the shards there."
        })
final class RunCancelCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    IdParameters.Run runId;

    @Override
    public Integer call() {
        UUID id = runId.id();
        PrintWriter out = CommandSupport.out(spec);
        try (Connections connections = CommandSupport.root(spec).connections()) {
            // An unknown run is refused before any execution database is opened.
            new RunStatusReader(connections.control().jdbi()).status(id);
            Connections.Reachable reach = connections.reachablePlacements();
            if (reach.placements().isEmpty()) {
                throw new UnavailableException("run " + id + " was not cancelled: no execution database of "
                        + connections.execution().source() + " can be reached ("
                        + String.join("; ", reach.unreachable().values()) + "); check them and repeat the command");
            }
            Placements placements = reach.placements().get();
            RunCancellation.Result r = new RunCancellation(placements).cancel(id);
            List<String> unreachable = new ArrayList<>(r.unreachable());
            // A configured database this process could not open matters only when the run has shards there.
            reach.unreachable().forEach((alias, why) -> {
                if (r.placements().contains(alias)) {
                    unreachable.add(why);
                }
            });
            for (String alias : r.placements()) {
                if (!placements.has(alias) && !reach.unreachable().containsKey(alias)) {
                    unreachable.add("execution database \"" + alias + "\" (not in "
                            + connections.execution().source() + ")");
                }
            }
            if (r.outcome() == RunCancellation.Outcome.ALREADY_CANCELLED) {
                out.printf("run %s is already cancelled%n", id);
            } else {
                out.printf(
                        "run %s cancelled: %d shard route(s) tombstoned, %d shard(s) closed in the execution"
                                + " databases; committed results stay (`vigilo run results %s`)%n",
                        id, r.tombstoned(), r.closedShards(), id);
            }
            out.flush();
            if (!unreachable.isEmpty()) {
                throw new UnavailableException("run " + id + " is cancelled, but its shards could not be closed in "
                        + String.join("; ", unreachable) + "; workers stop at their next heartbeat anyway; repeat"
                        + " `vigilo run cancel " + id + "` when the database is back");
            }
        }
        return ExitCode.OK;
    }
}
