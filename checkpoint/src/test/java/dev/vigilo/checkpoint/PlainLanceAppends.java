package dev.vigilo.checkpoint;

import java.util.List;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.Dataset;
import org.lance.WriteParams;

/**
 * Test fixture published in this module's test-jar (used by the checkpoint benchmark in {@code bench}): writes
 * checkpoint events with the log's own schema straight into a Lance dataset, one plain Lance append per call, without
 * MemWAL, fencing or merging. The baseline for MemWAL writes, and a fast bulk load of a log's base table. Not product
 * API: it bypasses every guarantee of {@link LogWriter}.
 */
public final class PlainLanceAppends {
    private PlainLanceAppends() {}

    /** Creates an empty dataset with the event schema and stable row ids at {@code uri}. */
    public static void create(CheckpointLog log, String uri) throws Exception {
        try (ArrowReader r = EventSchema.reader(log.allocator(), List.of())) {
            Dataset.write()
                    .allocator(log.allocator())
                    .reader(r)
                    .uri(uri)
                    .mode(WriteParams.WriteMode.CREATE)
                    .enableStableRowIds(true)
                    .execute()
                    .close();
        }
    }

    /** Appends {@code events} to the dataset at {@code uri} as one Lance append. */
    public static void append(CheckpointLog log, String uri, List<CheckpointEvent> events) throws Exception {
        try (ArrowReader r = EventSchema.reader(log.allocator(), events)) {
            Dataset.write()
                    .allocator(log.allocator())
                    .reader(r)
                    .uri(uri)
                    .mode(WriteParams.WriteMode.APPEND)
                    .execute()
                    .close();
        }
    }
}
