package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;
import org.lance.memwal.LsmScanner;
import org.lance.memwal.ShardSnapshot;

/**
 * A consistent read snapshot of the log: the base table at the version current when the reader was
 * opened, plus every shard generation flushed by then and not marked merged in that base version
 * (Lance's LSM scanner does not skip merged generations itself; excluding them also avoids double
 * reads). Events are de-duplicated by event id. Normal reads never load value_blob; {@link
 * #loadBlob} does, on demand. Not thread-safe; close after use.
 */
public final class LogReader implements AutoCloseable {
    private final CheckpointLog log;
    private final Dataset base;
    private final List<ShardSnapshot> snapshots = new ArrayList<>();
    private final List<GenRef> generations = new ArrayList<>();

    private record GenRef(ShardId shard, MemWalFiles.Generation generation) {}

    private LogReader(CheckpointLog log, Dataset base) {
        this.log = log;
        this.base = base;
    }

    static LogReader open(CheckpointLog log) {
        Dataset base = log.openDataset();
        try {
            LogReader r = new LogReader(log, base);
            Map<ShardId, Long> merged = MemWalFiles.mergedGenerations(base);
            for (ShardId shard : MemWalFiles.shards(log.files())) {
                MemWalFiles.ShardManifest m = MemWalFiles.manifest(log.files(), shard);
                long done = merged.getOrDefault(shard, 0L);
                ShardSnapshot snap = new ShardSnapshot(shard.toString()).withCurrentGeneration(m.currentGeneration());
                for (MemWalFiles.Generation g : m.flushed()) {
                    if (g.number() <= done) {
                        continue;
                    }
                    snap.withFlushedGeneration(g.number(), g.folder());
                    r.generations.add(new GenRef(shard, g));
                }
                r.snapshots.add(snap);
            }
            return r;
        } catch (RuntimeException e) {
            base.close();
            throw e;
        }
    }

    /** Number of unmerged flushed generations this snapshot reads besides the base table. */
    public int unmergedGenerations() {
        return generations.size();
    }

    /** The base table's version this snapshot reads. */
    public long baseVersion() {
        return base.version();
    }

    /**
     * Events of one item in item_seq order, without blob bytes; {@link FencingViolationException}
     * on two histories.
     */
    public List<CheckpointEvent> events(String itemId) {
        Objects.requireNonNull(itemId, "itemId");
        return Fold.ordered(itemId, scan("item_id = " + quote(itemId)));
    }

    /** The folded state of one item (resume read, invariant 4); empty if the item has no events. */
    public Optional<ItemState> fold(String itemId) {
        List<CheckpointEvent> evs = scan("item_id = " + quote(itemId));
        return evs.isEmpty() ? Optional.empty() : Optional.of(Fold.fold(itemId, evs));
    }

    /** Folded state of every item, keyed by item id in first-seen order. */
    public Map<String, ItemState> foldAll() {
        Map<String, List<CheckpointEvent>> byItem = new LinkedHashMap<>();
        for (CheckpointEvent e : scan(null)) {
            byItem.computeIfAbsent(e.itemId(), k -> new ArrayList<>()).add(e);
        }
        Map<String, ItemState> out = new LinkedHashMap<>();
        byItem.forEach((id, evs) -> out.put(id, Fold.fold(id, evs)));
        return out;
    }

    /** Every event (without blob bytes), de-duplicated, in no particular order. */
    public List<CheckpointEvent> allEvents() {
        return scan(null);
    }

    /**
     * The item's trajectory: its history and, recursively, its children's. Empty if the item does
     * not exist.
     */
    public Optional<Trajectory> trajectory(String itemId) {
        Optional<ItemState> st = fold(itemId);
        if (st.isEmpty()) {
            return Optional.empty();
        }
        Map<String, List<CheckpointEvent>> tree = new HashMap<>();
        for (CheckpointEvent e : scan("root_item_id = " + quote(st.get().item().rootItemId()))) {
            tree.computeIfAbsent(e.itemId(), k -> new ArrayList<>()).add(e);
        }
        return Optional.of(build(itemId, tree));
    }

    private Trajectory build(String itemId, Map<String, List<CheckpointEvent>> tree) {
        List<CheckpointEvent> history = Fold.ordered(itemId, tree.get(itemId));
        ItemState state = Fold.fold(itemId, history);
        List<String> kids = tree.entrySet().stream()
                .filter(en -> en.getValue().stream().anyMatch(e -> itemId.equals(e.parentItemId())))
                .map(Map.Entry::getKey)
                .sorted()
                .toList();
        List<Trajectory> children = new ArrayList<>();
        for (String k : kids) {
            children.add(build(k, tree));
        }
        return new Trajectory(state, history, children);
    }

    /**
     * Loads a blob's bytes (invariant 8): finds the event's _rowid with a lightweight filtered
     * scan, then take_rows of that row only, in the base table or the generation holding it.
     * Verifies size and checksum.
     */
    public byte[] loadBlob(FieldValue.BlobRef ref) {
        Objects.requireNonNull(ref, "ref");
        String filter = "event_id = " + quote(ref.eventId().value());
        byte[] bytes = take(base, filter);
        for (int i = 0; bytes == null && i < generations.size(); i++) {
            GenRef g = generations.get(i);
            try (Dataset gen = log.openGeneration(g.shard(), g.generation())) {
                bytes = take(gen, filter);
            }
        }
        if (bytes == null) {
            throw new DamagedException("blob of event " + ref.eventId() + " not found in this snapshot");
        }
        if (bytes.length != ref.size() || !ref.sha256().equals("sha256:" + EventIds.sha256Hex(bytes))) {
            throw new DamagedException("blob of event " + ref.eventId() + " fails its size/checksum check");
        }
        return bytes;
    }

    private byte[] take(Dataset ds, String filter) {
        try (LanceScanner sc = ds.newScan(new ScanOptions.Builder()
                        .filter(filter)
                        .columns(List.of("event_id"))
                        .withRowId(true)
                        .build());
                ArrowReader r = sc.scanBatches()) {
            Long rowId = null;
            while (rowId == null && r.loadNextBatch()) {
                VectorSchemaRoot root = r.getVectorSchemaRoot();
                if (root.getRowCount() > 0) {
                    rowId = (Long) root.getVector("_rowid").getObject(0);
                }
            }
            if (rowId == null) {
                return null;
            }
            try (ArrowReader t = ds.takeRows(List.of(rowId), List.of("value_blob"))) {
                while (t.loadNextBatch()) {
                    VectorSchemaRoot root = t.getVectorSchemaRoot();
                    if (root.getRowCount() > 0) {
                        return ((LargeVarBinaryVector) root.getVector("value_blob")).get(0);
                    }
                }
            }
            return null;
        } catch (Exception e) {
            throw new UnavailableException("blob read failed: " + e.getMessage(), e);
        }
    }

    private List<CheckpointEvent> scan(String filter) {
        LsmScanner sc = LsmScanner.fromSnapshots(base, snapshots).project(EventSchema.LIGHT_COLUMNS);
        if (filter != null) {
            sc.filter(filter);
        }
        Map<String, CheckpointEvent> byId = new LinkedHashMap<>();
        try (sc;
                ArrowReader r = sc.scanBatches()) {
            while (r.loadNextBatch()) {
                for (CheckpointEvent e : EventSchema.decode(r.getVectorSchemaRoot())) {
                    byId.putIfAbsent(e.eventId().value(), e);
                }
            }
        } catch (IOException e) {
            throw new UnavailableException("scan of " + log.location().uri() + " failed: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            if (e instanceof VigiloException) {
                throw e;
            }
            throw new UnavailableException("scan of " + log.location().uri() + " failed: " + e.getMessage(), e);
        }
        List<CheckpointEvent> out = new ArrayList<>(byId.values());
        out.sort(Comparator.comparing(CheckpointEvent::itemId).thenComparing(CheckpointEvent::itemSeq));
        return out;
    }

    static String quote(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    @Override
    public void close() {
        base.close();
    }
}
