package dev.vigilo.cli;

import dev.vigilo.datagen.ChatUsage;
import dev.vigilo.datagen.ExperimentStatus;
import dev.vigilo.datagen.Experiments;
import dev.vigilo.datagen.ProcessStatus;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code vigilo datagen status}: counts by state, failures by error type, progress. */
@Command(
        name = "status",
        mixinStandardHelpOptions = true,
        description = "Show an experiment's items by state, its failures by error type, its progress, what its chat"
                + " steps used (requests, tokens, cost) and the processes that worked on it.")
final class DatagenStatusCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = false, multiplicity = "1")
    DatagenCommand.Experiment experiment;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        ExperimentStatus s = Experiments.status(experiment.root(spec), experiment.pipeline(), experiment.experiment());
        PrintWriter out = CommandSupport.out(spec);
        if (json.requested()) {
            json.printDocument(s.toJson());
        } else {
            out.printf(
                    "items %d  completed %d  filtered %d  failed %d  running %d  progress %.0f%%%n",
                    s.items(), s.completed(), s.filtered(), s.failed(), s.running(), 100 * s.progress());
            s.failuresByType().forEach((type, n) -> out.printf("failed[%s] %d%n", type, n));
            s.filteredByStep().forEach((step, n) -> out.printf("filtered[%s] %d%n", step, n));
            if (s.usage().requests() > 0 || s.usage().cachedAnswers() > 0) {
                out.println("usage " + usage(s.usage()));
                s.usageByStep().forEach((step, u) -> out.println("usage[" + step + "] " + usage(u)));
            }
            for (ProcessStatus p : s.processes()) {
                out.printf(
                        "process %s  %s  items %d  steps %d  buckets %d%s%n",
                        p.writer(),
                        p.live() ? "live" : "gone",
                        p.itemsFinished(),
                        p.stepsCompleted(),
                        p.buckets().size(),
                        p.holder().isEmpty() ? "" : "  " + p.holder());
            }
        }
        return ExitCode.OK;
    }

    private static String usage(ChatUsage u) {
        return "requests " + u.requests() + "  retries " + u.retries() + "  cached " + u.cachedAnswers()
                + "  prompt_tokens " + u.promptTokens() + "  completion_tokens " + u.completionTokens()
                + (u.cost() == null
                        ? ""
                        : "  cost " + u.cost().stripTrailingZeros().toPlainString());
    }
}
