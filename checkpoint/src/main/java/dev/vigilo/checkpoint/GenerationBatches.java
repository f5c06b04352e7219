package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.DamagedException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The events of flushed generations, gathered for a merge into the base table as the Arrow batches they were scanned
 * in: each event id once (the first copy; a retried batch can sit in a generation twice, and a merge insert refuses
 * duplicate keys), nothing decoded into events and encoded again. A batch without duplicates is moved as it is (its
 * buffers change owner); only a batch with duplicates is copied row by row.
 *
 * <p>Owns its batches until {@link #reader()} hands them on. Not thread-safe.
 */
final class GenerationBatches implements AutoCloseable {
    private final BufferAllocator allocator;
    private final List<VectorSchemaRoot> batches = new ArrayList<>();
    private final Set<String> ids = new HashSet<>();

    GenerationBatches(BufferAllocator allocator) {
        this.allocator = allocator;
    }

    /** Adds every batch {@code scan} yields (a scan of a generation with every column of the log's schema). */
    void addAll(ArrowReader scan) throws IOException {
        while (scan.loadNextBatch()) {
            add(scan.getVectorSchemaRoot());
        }
    }

    /** The gathered batches, in order; the reader owns them from here on. */
    ArrowReader reader() {
        ArrowReader r = EventSchema.readerOf(allocator, batches);
        batches.clear();
        return r;
    }

    private void add(VectorSchemaRoot scanned) {
        int n = scanned.getRowCount();
        VarCharVector eventIds = (VarCharVector) column(scanned, "event_id");
        IntVector versions = (IntVector) column(scanned, "schema_version");
        int[] keep = new int[n];
        int kept = 0;
        for (int i = 0; i < n; i++) {
            if (versions.get(i) > CheckpointBatch.SCHEMA_VERSION) {
                throw new DamagedException("event written with schema_version " + versions.get(i)
                        + " but this Vigilo reads up to " + CheckpointBatch.SCHEMA_VERSION + "; upgrade Vigilo");
            }
            if (ids.add(new String(eventIds.get(i), StandardCharsets.UTF_8))) {
                keep[kept++] = i;
            }
        }
        if (kept == 0) {
            return;
        }
        VectorSchemaRoot out = VectorSchemaRoot.create(EventSchema.SCHEMA, allocator);
        try {
            for (Field f : EventSchema.SCHEMA.getFields()) {
                FieldVector from = column(scanned, f.getName());
                FieldVector to = out.getVector(f.getName());
                if (kept == n) {
                    from.makeTransferPair(to).transfer();
                } else {
                    to.setInitialCapacity(kept);
                    to.allocateNew();
                    for (int j = 0; j < kept; j++) {
                        to.copyFromSafe(keep[j], j, from);
                    }
                    to.setValueCount(kept);
                }
            }
            out.setRowCount(kept);
        } catch (RuntimeException e) {
            out.close();
            throw e;
        }
        batches.add(out);
    }

    private static FieldVector column(VectorSchemaRoot root, String name) {
        FieldVector v = root.getVector(name);
        if (v == null) {
            throw new DamagedException("column " + name + " missing from a generation of the log");
        }
        return v;
    }

    @Override
    public void close() {
        batches.forEach(VectorSchemaRoot::close);
        batches.clear();
    }
}
