package dev.vigilo.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code vigilo dataset}: the finalized dataset catalog. */
@Command(
        name = "dataset",
        mixinStandardHelpOptions = true,
        description = "Upload, inspect and verify finalized datasets.",
        subcommands = {
            DatasetUploadCommand.class,
            DatasetShowCommand.class,
            DatasetListCommand.class,
            DatasetVerifyCommand.class
        })
final class DatasetCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
