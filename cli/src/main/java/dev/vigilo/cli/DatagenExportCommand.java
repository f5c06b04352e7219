package dev.vigilo.cli;

import dev.vigilo.common.errors.InvalidInputException;
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
 * {@code vigilo datagen export --out FILE.jsonl}: completed items, ready for {@code vigilo dataset upload}; with
 * {@code --format parquet} the same items as the rows of a Parquet file; or, with {@code --to-dataset}, straight into
 * the dataset catalog.
 */
@Command(
        name = "export",
        mixinStandardHelpOptions = true,
        description = {
            "Write an experiment's completed items as JSONL cases, ready for `vigilo dataset upload`, to --out FILE;"
                    + " or, with --to-dataset and --map, store them as a finalized dataset at once and print its"
                    + " upload id.",
            "With --format parquet: one Parquet row per item instead (item_id, then one typed column per field), for"
                    + " DuckDB, pandas or `vigilo dataset upload --map`."
        })
final class DatagenExportCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = false, multiplicity = "1")
    DatagenCommand.Experiment experiment;

    @Mixin
    OutputFileOptions output;

    @Option(
            names = "--format",
            paramLabel = "jsonl|parquet",
            description = "With --out: jsonl (one JSON case per line, the default) or parquet (one row per item,"
                    + " item_id and a typed column per field).")
    String format;

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

    /** Whether {@code --format} asks for Parquet; anything but the two formats is refused (exit 3). */
    private boolean parquet() {
        if (format == null || format.equals("jsonl")) {
            return false;
        }
        if (format.equals("parquet")) {
            return true;
        }
        throw new InvalidInputException("--format: unknown format '" + CommandSupport.shown(format)
                + "'; use --format jsonl (one JSON case per line, the default) or parquet (one row per item)");
    }

    @Override
    public Integer call() {
        if (!toDataset) {
            if (map != null || name != null || uploadId != null || datasetStore != null) {
                throw new ParameterException(
                        spec.commandLine(), "--map, --name, --upload-id and --dataset-store need --to-dataset");
            }
            output.required();
            output.check();
            if (parquet()) {
                long rows = DatasetExport.toParquet(
                        experiment.root(spec),
                        experiment.pipeline(),
                        experiment.experiment(),
                        output.path(),
                        output.force());
                CommandSupport.out(spec).printf("exported %d items to %s%n", rows, CommandSupport.shown(output.path()));
                return ExitCode.OK;
            }
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
        if (format != null) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--format chooses the --out file's format; --to-dataset" + " stores cases, not a file");
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
