package dev.vigilo.cli;

import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetDamagedException;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.VerifyReport;
import dev.vigilo.storage.ObjectStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code vigilo dataset verify ID}: exit 0 when intact, 1 with the damaged key otherwise. */
@Command(
        name = "verify",
        mixinStandardHelpOptions = true,
        description = {
            "Re-read every file of a dataset and check every digest, the index structure and the "
                    + "ordered case id/hash fold.",
            "Exit 0 when intact, 1 when damaged (the damaged key is printed)."
        })
final class DatasetVerifyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    IdParameters.Upload uploadId;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        return Verification.run(spec, json, connections -> {
            DatasetEntry entry = new DatasetCatalog(connections.control().jdbi()).get(uploadId.id());
            ObjectStore store = connections.openStore(entry.storage());
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("upload_id", entry.uploadId().toString());
            try {
                VerifyReport report = DatasetReader.open(entry, store).verify();
                result.put("intact", true);
                result.put("case_count", report.caseCount());
                result.put("case_files", report.caseFiles());
                result.put("index_documents", report.indexDocuments());
                result.put("bytes_read", report.bytesRead());
                result.put("damaged_key", null);
                result.put("error", null);
                return Verification.intact(
                        result,
                        List.of(String.format(
                                "intact: %d cases in %d case files and %d index documents (%d bytes) verified",
                                report.caseCount(), report.caseFiles(), report.indexDocuments(), report.bytesRead())));
            } catch (DatasetDamagedException e) {
                result.put("intact", false);
                result.put("damaged_key", e.key().value());
                result.put("error", e.getMessage());
                return Verification.damaged(result, "DAMAGED: " + e.key(), e.getMessage());
            }
        });
    }
}
