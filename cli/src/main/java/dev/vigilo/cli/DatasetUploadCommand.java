package dev.vigilo.cli;

import dev.vigilo.dataset.CaseMap;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.storage.ObjectStore;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code vigilo dataset upload FILE}. */
@Command(
        name = "upload",
        mixinStandardHelpOptions = true,
        description = {
            "Upload a file of cases as a finalized dataset and print its upload id: JSON lines (.jsonl, or compressed"
                    + " .jsonl.gz, .jsonl.zst; one case per line), CSV (.csv, a header row, one case per row) or"
                    + " Parquet (.parquet, or a directory of .parquet shards such as a Hugging Face dataset's; one"
                    + " case per row).",
            "",
            "A case: {\"id\": string, \"input\": any JSON, \"expected\": any JSON (optional), "
                    + "\"group\": string (optional), \"tags\": [string] (optional), \"metadata\": object (optional)}.",
            "A CSV or Parquet file's columns are named like those fields (metadata.KEY for metadata in CSV) unless"
                    + " --map says which column is which.",
            "The file is validated completely before anything is stored; the catalog entry appears only after "
                    + "every file is stored and verified."
        })
final class DatasetUploadCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(
            index = "0",
            paramLabel = "FILE",
            description = "The file to upload: .jsonl, .jsonl.gz, .jsonl.zst, .csv or .parquet, or a directory of"
                    + " .parquet shards.")
    Path file;

    @Option(
            names = "--map",
            paramLabel = "TARGET=SOURCE,...",
            description = "Which column of a CSV or Parquet file, or field of each JSON record of a JSON lines file,"
                    + " becomes which case field: id=COL,input=COL[,expected=COL,group=COL,tags=COL,metadata.KEY=COL];"
                    + " COL:json parses a CSV cell as JSON (docs/formats/dataset.md).")
    String map;

    @Option(
            names = "--name",
            description = "A label for the dataset, printable characters only (default: the file name without .jsonl).")
    String name;

    @Option(
            names = "--upload-id",
            paramLabel = "UUID",
            description = "Choose the upload id, for idempotent retries: the same file under the same id "
                    + "returns the existing entry.")
    String uploadId;

    @Option(
            names = "--store",
            paramLabel = "NAME",
            description = "The store of the storage config to upload into (default: its default store).")
    String store;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        VigiloCommand root = CommandSupport.root(spec);
        UploadRequest request = new UploadRequest(
                file,
                Optional.ofNullable(name),
                Optional.ofNullable(uploadId).map(id -> CommandSupport.uploadId(id, "--upload-id")),
                Optional.ofNullable(map).map(m -> CaseMap.parse(m, "--map")));
        try (Connections connections = root.connections();
                ProgressDisplay progress = ProgressDisplay.forTerminal(file)) {
            ObjectStore objectStore = connections.openStore(Optional.ofNullable(store));
            // The control database opens while the cases are read and stored; the upload needs it only at the end
            // (with --upload-id, first).
            connections.openControlInBackground();
            DatasetCatalog catalog =
                    new DatasetCatalog(() -> connections.control().jdbi());
            DatasetEntry entry = catalog.upload(request, objectStore, progress);
            progress.close();
            if (json.requested()) {
                json.print(Json.dataset(entry));
            } else {
                CommandSupport.out(spec).println(entry.uploadId());
            }
        }
        return ExitCode.OK;
    }
}
