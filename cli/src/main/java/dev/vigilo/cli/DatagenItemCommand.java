package dev.vigilo.cli;

import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.datagen.Experiments;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code vigilo datagen item ITEM_ID}: one item's folded state and trajectory as JSON. */
@Command(
        name = "item",
        mixinStandardHelpOptions = true,
        description = "Print one item's folded state and trajectory (its steps, and its descendants) as JSON.")
final class DatagenItemCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "ITEM_ID", description = "The item's id.")
    String itemId;

    @ArgGroup(exclusive = false, multiplicity = "1")
    DatagenCommand.Experiment experiment;

    @Override
    public Integer call() {
        var item = Experiments.item(experiment.root(spec), experiment.pipeline(), experiment.experiment(), itemId);
        if (item.isEmpty()) {
            throw new NotFoundException("experiment " + experiment.experiment + " of pipeline " + experiment.pipeline
                    + " has no item \"" + itemId + "\"; see `vigilo datagen status`");
        }
        CommandSupport.out(spec).println(item.get().toString());
        return ExitCode.OK;
    }
}
