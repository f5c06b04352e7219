package dev.vigilo.cli;

import dev.vigilo.plan.PlanStatus;
import dev.vigilo.plan.RunState;
import dev.vigilo.plan.RunStatus;
import dev.vigilo.plan.RunStatusReader;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code vigilo run status UUID}. */
@Command(
        name = "status",
        mixinStandardHelpOptions = true,
        description = "Show a run's status, creation progress and, once published, its planned shards.")
final class RunStatusCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "RUN_ID", description = "The run id.")
    String runId;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    @Override
    public Integer call() {
        try (Connections connections = CommandSupport.root(spec).connections()) {
            RunStatus status =
                    new RunStatusReader(connections.control().jdbi()).status(CommandSupport.runId(runId, "RUN_ID"));
            PrintWriter out = CommandSupport.out(spec);
            if (json) {
                out.println(status.toJson());
            } else {
                print(out, status);
            }
        }
        return ExitCode.OK;
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
