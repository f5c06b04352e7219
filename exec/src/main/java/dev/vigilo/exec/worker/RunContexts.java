package dev.vigilo.exec.worker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DecodedFileCache;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.OutageWaits;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.Service;
import dev.vigilo.exec.WaitingReader;
import dev.vigilo.exec.WaitingStore;
import dev.vigilo.exec.record.RunSnapshot;
import dev.vigilo.exec.record.RunSnapshotParser;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.storage.CachingObjectReader;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreBinding;
import dev.vigilo.storage.StoreSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A worker's per-run contexts, loaded on the first chunk of a run and kept while the worker lives: the snapshot from
 * the execution database, the configuration read and verified through the plan's manifest, the dataset's catalog
 * entry, and one open store per physical binding. One immutable-byte cache serves every run (the spec's per-worker
 * cache), and one cache of decoded, verified dataset files beside it ({@link DecodedFileCache}). Every read of a load, and every store and cache access of a context, waits out outages of the database or
 * store it calls ({@link OutageWaits}). Thread-safe; loading holds the lock only for the map, never over I/O (two
 * threads may load one run at once; the first stored wins).
 */
final class RunContexts implements AutoCloseable {
    private static final Duration READ = Duration.ofSeconds(120);

    private final Placements placements;
    private final StorageConfig storage;
    private final OutageWaits waits;
    private final Map<UUID, RunContext> runs = new HashMap<>();
    private final Map<String, ObjectStore> stores = new HashMap<>();
    private CachingObjectReader cache;
    /** Decoded case files and index documents, one bound for the worker like {@link #cache}. */
    private final DecodedFileCache decoded = new DecodedFileCache(DecodedFileCache.DEFAULT_MAX_CHARGED_BYTES);

    RunContexts(Placements placements, StorageConfig storage, OutageWaits waits) {
        this.placements = placements;
        this.storage = storage;
        this.waits = waits;
    }

    /** The context of {@code runId}, whose snapshot is read from execution database {@code alias}. */
    RunContext get(UUID runId, String alias) {
        synchronized (this) {
            RunContext c = runs.get(runId);
            if (c != null) {
                return c;
            }
        }
        RunContext loaded = load(runId, alias);
        synchronized (this) {
            return runs.computeIfAbsent(runId, k -> loaded);
        }
    }

    private RunContext load(UUID runId, String alias) {
        String text = waits.await(
                Service.DATABASE,
                alias,
                attempt -> LocalTransactions.inTransaction(
                        placements.jdbi(alias),
                        "reading the snapshot of run " + runId,
                        h -> h.createQuery("SELECT snapshot FROM exec_runs WHERE run_id = :r")
                                .bind("r", runId)
                                .mapTo(String.class)
                                .findOne()
                                .orElseThrow(
                                        () -> new DamagedException("run " + runId + " has chunk rows but no snapshot in"
                                                + " execution database \"" + alias + "\""))));
        RunSnapshot snapshot = RunSnapshotParser.fromJson(text);
        ObjectStore raw = store(snapshot.storageBinding());
        ObjectStore store = new WaitingStore(raw, waits);
        ObjectReader reader = new WaitingReader(cacheFor(raw), waits);
        // The manifest and configuration are read through their references: verified, never trusted from SQL.
        PublishedPlan plan = PublishedPlan.open(runId, snapshot.planRoot(), reader, Deadline.after(READ));
        JsonNode configuration = plan.configuration(Deadline.after(READ));
        List<String> evaluators = new ArrayList<>();
        configuration
                .path("evaluator_plan")
                .forEach(e -> evaluators.add(e.path("name").asText()));
        List<int[]> required = new ArrayList<>();
        for (RunSnapshot.Gate g : snapshot.gates()) {
            int[] idx = new int[g.requiredEvaluators().size()];
            for (int i = 0; i < idx.length; i++) {
                idx[i] = evaluators.indexOf(g.requiredEvaluators().get(i));
                if (idx[i] < 0) {
                    throw new DamagedException("run " + runId + ": gate " + g.name() + " requires evaluator "
                            + g.requiredEvaluators().get(i) + ", which the configuration does not define");
                }
            }
            required.add(idx);
        }
        DatasetEntry dataset = waits.await(
                        Service.DATABASE,
                        ExecutionConfig.CONTROL,
                        attempt -> new DatasetCatalog(placements.control()).find(snapshot.datasetUploadId()))
                .orElseThrow(() -> new DamagedException(
                        "run " + runId + ": its dataset " + snapshot.datasetUploadId() + " is not in the catalog"));
        return new RunContext(runId, snapshot, configuration, evaluators, required, store, reader, dataset, decoded);
    }

    private synchronized CachingObjectReader cacheFor(ObjectStore store) {
        if (cache == null) {
            cache = new CachingObjectReader(store);
            return cache;
        }
        return cache.binding().equals(store.binding()) ? cache : cache.forStore(store);
    }

    private synchronized ObjectStore store(String binding) {
        ObjectStore s = stores.get(binding);
        if (s == null) {
            StoreSpec spec = storage.resolve(new StoreBinding(binding))
                    .orElseThrow(() -> new InvalidInputException("the run's files are stored in " + binding
                            + ", which this worker's storage configuration (" + storage.source()
                            + ") does not resolve; start the worker with VIGILO_STORAGE_CONFIG or --storage-config"
                            + " naming that store"));
            s = ObjectStores.open(spec);
            stores.put(binding, s);
        }
        return s;
    }

    /** The decoded-file cache's counters. */
    DecodedFileCache.Stats decodedStats() {
        return decoded.stats();
    }

    /** The cache's counters (for metrics), or null before the first run was loaded. */
    synchronized CachingObjectReader.Stats cacheStats() {
        return cache == null ? null : cache.stats();
    }

    @Override
    public synchronized void close() {
        stores.values().forEach(ObjectStore::close);
        stores.clear();
        runs.clear();
    }
}
