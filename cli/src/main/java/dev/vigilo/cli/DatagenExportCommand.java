package dev.vigilo.cli;

import dev.vigilo.datagen.Experiments;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code vigilo datagen export --out FILE.jsonl}: completed items, ready for {@code vigilo dataset upload}. */
@Command(
        name = "export",
        mixinStandardHelpOptions = true,
        description =
                "Write an experiment's completed items as JSONL cases, ready for `vigilo dataset upload`, to --out FILE"
                        + " (required).")
final class DatagenExportCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = false, multiplicity = "1")
    DatagenCommand.Experiment experiment;

    @Mixin
    OutputFileOptions output;

    @Override
    public Integer call() {
        output.required();
        output.check();
        long n = Experiments.export(
                experiment.root(spec), experiment.pipeline(), experiment.experiment(), output.path(), output.force());
        CommandSupport.out(spec).printf("exported %d items to %s%n", n, CommandSupport.shown(output.path()));
        return ExitCode.OK;
    }
}
