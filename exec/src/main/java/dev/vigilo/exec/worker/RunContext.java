package dev.vigilo.exec.worker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.DecodedFileCache;
import dev.vigilo.exec.WaitingReader;
import dev.vigilo.exec.WaitingStore;
import dev.vigilo.exec.record.RunSnapshot;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectStore;
import java.util.List;
import java.util.UUID;

/**
 * What every chunk of one run shares in a worker: the run snapshot, the frozen configuration, the store and the
 * worker's cache over it, and the dataset's catalog entry. Immutable; the store is closed by {@link RunContexts}.
 *
 * @param runId          the run
 * @param snapshot       the run snapshot admission wrote
 * @param configuration  the verified configuration document (docs/formats/plan-configuration.md)
 * @param evaluatorNames evaluator names in profile order (bit i of a chunk entry's evaluator mask)
 * @param requiredByGate per gate (in gate order), the indices of its required evaluators
 * @param store          the run's object store (receipts, transcripts and long outputs are written here); in a worker,
 *                       one that waits out the store's outages ({@link WaitingStore})
 * @param reader         the worker's verified immutable-byte cache over {@code store}, likewise waiting
 *                       ({@link WaitingReader})
 * @param dataset        the finalized dataset's catalog entry
 * @param decoded        the worker's decoded, verified dataset files, shared by every run's chunks
 */
record RunContext(
        UUID runId,
        RunSnapshot snapshot,
        JsonNode configuration,
        List<String> evaluatorNames,
        List<int[]> requiredByGate,
        ObjectStore store,
        ObjectReader reader,
        DatasetEntry dataset,
        DecodedFileCache decoded) {

    /**
     * A new reader of the run's dataset through {@link #reader} and the worker's decoded files: each case file a
     * chunk touches is decoded once while the worker retains it (docs/execution.md, "Decoded files").
     */
    DatasetReader datasetReader() {
        return DatasetReader.open(dataset, reader, decoded);
    }

    List<String> gateNames() {
        return snapshot.gates().stream().map(RunSnapshot.Gate::name).toList();
    }
}
