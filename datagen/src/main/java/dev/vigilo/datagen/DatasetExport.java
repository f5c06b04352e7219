package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.checkpoint.ItemState;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.input.OutputFiles;
import dev.vigilo.dataset.CaseMap;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetOrigin;
import dev.vigilo.dataset.InvalidDatasetException;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.storage.ObjectStore;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * {@code vigilo datagen export --to-dataset}: an experiment's completed leaf items (those {@link Experiments#export}
 * writes) become a finalized dataset in one step, through the same upload as {@code vigilo dataset upload} (its
 * validation, verification and idempotency), with the experiment recorded as the dataset's {@link DatasetOrigin}.
 *
 * <p>Each item is a record {@code {"item_id": ID, FIELD: VALUE, ...}} (a field named {@code item_id} hides the id) that
 * the {@link CaseMap} maps onto a case. The records go through a temporary file, deleted afterwards: the upload reads
 * its source twice. An item without a mapped field fails the export, naming the item; nothing is stored then.
 */
public final class DatasetExport {
    private DatasetExport() {}

    /**
     * {@code vigilo datagen export --format parquet}: the same completed leaf items as {@link #toDataset} maps, as the
     * records of one Parquet file at {@code out} (typed columns from the field kinds: docs/datagen.md, "Parquet
     * export"), written crash-safely: an existing {@code out} is kept ({@code InvalidInputException}) unless {@code
     * replace}, and a failed export leaves no file.
     *
     * @return the rows (items) written
     */
    public static long toParquet(LogRoot durableRoot, String pipeline, String experiment, Path out, boolean replace) {
        Objects.requireNonNull(out, "out");
        Experiments.CompletedLeaves leaves = Experiments.completedLeaves(durableRoot, pipeline, experiment);
        return OutputFiles.write(
                out, "--out", replace, file -> ParquetExport.write(leaves.items(), pipeline, experiment, file));
    }

    /**
     * Exports the completed leaf items of {@code pipeline}/{@code experiment} under {@code durableRoot} as a dataset
     * named {@code name}.
     *
     * @throws InvalidInputException when the experiment has no completed item, or an item cannot be mapped
     */
    public static DatasetEntry toDataset(
            LogRoot durableRoot,
            String pipeline,
            String experiment,
            String name,
            CaseMap map,
            Optional<UUID> uploadId,
            DatasetCatalog catalog,
            ObjectStore store,
            UploadProgress progress) {
        Objects.requireNonNull(map, "map");
        Experiments.CompletedLeaves leaves = Experiments.completedLeaves(durableRoot, pipeline, experiment);
        String what = "experiment \"" + experiment + "\" of pipeline \"" + pipeline + "\"";
        if (leaves.items().isEmpty()) {
            throw new InvalidInputException(
                    what + " has no completed items to export; see `vigilo datagen status` for where they are");
        }
        Path records = null;
        try {
            records = Files.createTempFile("vigilo-export-", ".jsonl");
            try (Writer w = new BufferedWriter(Files.newBufferedWriter(records, StandardCharsets.UTF_8))) {
                for (ItemState s : leaves.items()) {
                    ObjectNode record = Json.MAPPER
                            .createObjectNode()
                            .put("item_id", s.item().itemId());
                    record.setAll(Json.fields(s.fields()));
                    w.write(Json.canonical(record));
                    w.write('\n');
                }
            }
            DatasetOrigin origin = new DatasetOrigin(
                    durableRoot.uri(),
                    pipeline,
                    experiment,
                    leaves.logVersion(),
                    leaves.items().size(),
                    map);
            UploadRequest request =
                    new UploadRequest(records, Optional.of(name), uploadId, Optional.of(map), Optional.of(origin));
            try {
                return catalog.upload(request, store, progress);
            } catch (InvalidDatasetException e) {
                // The records file is ours, not the user's: say which experiment, not which temporary file.
                String prefix = e.file() + (e.line() > 0 ? ":" + e.line() : "")
                        + (e.column() > 0 ? ":" + e.column() : "") + ": ";
                String problem =
                        e.getMessage().startsWith(prefix) ? e.getMessage().substring(prefix.length()) : e.getMessage();
                throw new InvalidInputException(what + ": " + problem + "; fix --map", e);
            }
        } catch (IOException e) {
            throw new UnavailableException("cannot write the exported items to a temporary file: " + e.getMessage(), e);
        } finally {
            if (records != null) {
                try {
                    Files.deleteIfExists(records);
                } catch (IOException ignored) {
                    // A temporary file left behind is the system's to clean.
                }
            }
        }
    }
}
