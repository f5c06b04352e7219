package dev.vigilo.cli;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.exec.placement.ShardMover;
import dev.vigilo.plan.RunStatusReader;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo run move-shard UUID SHARD ALIAS} (docs/execution.md, "Shard moves"): moves one shard's execution
 * records of an executing run to another execution database. Dataset, plan and receipt objects stay where they are.
 */
@Command(
        name = "move-shard",
        mixinStandardHelpOptions = true,
        description = {
            "Move one shard of a pending or running run to another execution database (by alias); its chunks keep"
                    + " executing there. Both databases must be in this process's execution configuration.",
            "An interrupted move leaves the shard paused; repeat the command (to the same or another alias) to"
                    + " finish it. A run that is not executing (creating, settled, failed, cancelled) exits 4."
        })
final class RunMoveShardCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    IdParameters.Run runId;

    @Parameters(index = "1", paramLabel = "SHARD", description = "The shard, 0..127 (see `vigilo run status`).")
    int shard;

    @Parameters(index = "2", paramLabel = "ALIAS", description = "The target execution database's alias.")
    String alias;

    @Override
    public Integer call() {
        UUID id = runId.id();
        try (Connections connections = CommandSupport.root(spec).connections()) {
            new RunStatusReader(connections.control().jdbi()).status(id); // unknown run: exit 3, nothing opened
            ShardMover.Result r;
            try {
                r = new ShardMover(connections.placements()).move(id, shard, alias);
            } catch (CancelledException e) {
                if (Thread.currentThread().isInterrupted()) {
                    throw e;
                }
                // The run was cancelled (not this command): a conflict with the run's state, not an interruption.
                throw new ConflictException(e.getMessage(), e);
            }
            if (r.outcome() == ShardMover.Outcome.ALREADY_THERE) {
                CommandSupport.out(spec)
                        .printf("shard %d of run %s is already in execution database \"%s\"%n", shard, id, r.to());
            } else {
                CommandSupport.out(spec)
                        .printf(
                                "shard %d of run %s moved from execution database \"%s\" to \"%s\" (%d chunk rows,"
                                        + " route epoch %d)%n",
                                shard, id, r.from(), r.to(), r.chunks(), r.epoch());
            }
        }
        return ExitCode.OK;
    }
}
