package dev.vigilo.cli;

import dev.vigilo.datagen.DatasetExport;
import dev.vigilo.datagen.Experiments;
import dev.vigilo.dataset.CaseMap;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo datagen export --out FILE.jsonl}: completed items, ready for {@code vigilo dataset upload}; or, with
 * {@code --to-dataset}, straight into the dataset catalog.
 */
@Command(
        name = "export",
        mixinStandardHelpOptions = true,
        description = {
            "Write an experiment's completed items as JSONL cases, ready for `vigilo dataset upload`, to --out FILE;"
                    + " or, with --to-dataset and --map, store them as a finalized dataset at once and print its"
                    + " upload id."
        })
final class DatagenExportCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = false, multiplicity = "1")
    DatagenCommand.Experiment experiment;

    @Mixin
    OutputFileOptions output;

    @Option(
            names = "--to-dataset",
            description = "Store the completed items as a finalized dataset (the experiment recorded as its origin)"
                    + " instead of writing a file; needs --map.")
    boolean toDataset;

    @Option(
            names = "--map",
            paramLabel = "TARGET=FIELD,...",
            description = "With --to-dataset: which item field becomes which case field, e.g."
                    + " id=item_id,input=question,expected=answer[,group=F,tags=F,metadata.KEY=F]; item_id is the"
                    + " item's id.")
    String map;

    @Option(names = "--name", description = "With --to-dataset: the dataset's label (default: the experiment's name).")
    String name;

    @Option(
            names = "--upload-id",
            paramLabel = "UUID",
            description = "With --to-dataset: choose the upload id, for idempotent retries.")
    String uploadId;

    @Option(
            names = "--dataset-store",
            paramLabel = "NAME",
            description = "With --to-dataset: the store of the storage config to store the dataset in (default: its"
                    + " default store).")
    String datasetStore;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        if (!toDataset) {
            if (map != null || name != null || uploadId != null || datasetStore != null) {
                throw new ParameterException(
                        spec.commandLine(), "--map, --name, --upload-id and --dataset-store need --to-dataset");
            }
            output.required();
            output.check();
            long n = Experiments.export(
                    experiment.root(spec),
                    experiment.pipeline(),
                    experiment.experiment(),
                    output.path(),
                    output.force());
            CommandSupport.out(spec).printf("exported %d items to %s%n", n, CommandSupport.shown(output.path()));
            return ExitCode.OK;
        }
        if (output.given()) {
            throw new ParameterException(spec.commandLine(), "give --out or --to-dataset, not both");
        }
        if (map == null) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--to-dataset needs --map, e.g. --map" + " id=item_id,input=question,expected=answer");
        }
        CaseMap caseMap = CaseMap.parse(map, "--map");
        VigiloCommand root = CommandSupport.root(spec);
        try (Connections connections = root.connections()) {
            DatasetEntry entry = DatasetExport.toDataset(
                    experiment.root(spec),
                    experiment.pipeline(),
                    experiment.experiment(),
                    name != null ? name : experiment.experiment(),
                    caseMap,
                    Optional.ofNullable(uploadId).map(id -> CommandSupport.uploadId(id, "--upload-id")),
                    new DatasetCatalog(connections.control().jdbi()),
                    connections.openStore(Optional.ofNullable(datasetStore)),
                    dev.vigilo.dataset.UploadProgress.NONE);
            if (json.requested()) {
                json.print(Json.dataset(entry));
            } else {
                CommandSupport.out(spec).println(entry.uploadId());
            }
        }
        return ExitCode.OK;
    }
}
