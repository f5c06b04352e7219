package dev.vigilo.cli;

import dev.vigilo.common.input.OutputFiles;
import dev.vigilo.datagen.Experiments;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code vigilo datagen export --out FILE.jsonl}: completed items, ready for {@code vigilo dataset upload}. */
@Command(
        name = "export",
        mixinStandardHelpOptions = true,
        description = "Write an experiment's completed items as JSONL cases, ready for `vigilo dataset upload`.")
final class DatagenExportCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = false, multiplicity = "1")
    DatagenCommand.Experiment experiment;

    @Option(
            names = "--out",
            required = true,
            paramLabel = "FILE.jsonl",
            description = "Where to write the cases; its directory must exist, and an existing file is kept "
                    + "unless --force is given.")
    Path out;

    @Option(names = "--force", description = "Replace an existing --out file.")
    boolean force;

    @Override
    public Integer call() {
        OutputFiles.check(out, "--out", force);
        long n = Experiments.export(experiment.root(spec), experiment.pipeline(), experiment.experiment(), out, force);
        CommandSupport.out(spec).printf("exported %d items to %s%n", n, CommandSupport.shown(out));
        return ExitCode.OK;
    }
}
