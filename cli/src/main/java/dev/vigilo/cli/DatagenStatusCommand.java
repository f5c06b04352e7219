package dev.vigilo.cli;

import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.datagen.ChatUsage;
import dev.vigilo.datagen.ExperimentBudget;
import dev.vigilo.datagen.ExperimentStatus;
import dev.vigilo.datagen.Experiments;
import dev.vigilo.datagen.ProcessStatus;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.util.Optional;
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
                + " steps used (requests, tokens, cost), its budget when it has one (max_cost, charged, spent,"
                + " reserved, remaining; read from the control database) and the processes that worked on it.")
final class DatagenStatusCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = false, multiplicity = "1")
    DatagenCommand.Experiment experiment;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        LogRoot root = experiment.root(spec);
        ExperimentStatus s = Experiments.status(root, experiment.pipeline(), experiment.experiment());
        ExperimentBudget budget = budget(root);
        PrintWriter out = CommandSupport.out(spec);
        if (json.requested()) {
            json.printDocument(s.toJson(budget));
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
            if (budget != null) {
                out.println(budget.toText());
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

    /**
     * The experiment's budget from the control database, when a run of it had one (recorded beside its log): only then
     * is the database opened, as {@code datagen run} opens it only for a pipeline that needs it.
     */
    private ExperimentBudget budget(LogRoot root) {
        Optional<BigDecimal> recorded =
                Experiments.recordedBudget(root, experiment.pipeline(), experiment.experiment());
        if (recorded.isEmpty()) {
            return null;
        }
        try (Connections connections = CommandSupport.root(spec).connections()) {
            return Experiments.budget(
                    connections.control().jdbi(), root, experiment.pipeline(), experiment.experiment(), recorded.get());
        }
    }

    private static String usage(ChatUsage u) {
        return "requests " + u.requests() + "  retries " + u.retries() + "  cached " + u.cachedAnswers()
                + "  prompt_tokens " + u.promptTokens() + "  completion_tokens " + u.completionTokens()
                + (u.cost() == null
                        ? ""
                        : "  cost " + u.cost().stripTrailingZeros().toPlainString());
    }
}
