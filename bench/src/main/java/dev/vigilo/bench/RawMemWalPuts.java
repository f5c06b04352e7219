package dev.vigilo.bench;

import dev.vigilo.checkpoint.CheckpointEvent;
import dev.vigilo.checkpoint.FieldValue;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.WriteParams;
import org.lance.memwal.InitializeMemWalParams;
import org.lance.memwal.ShardWriter;
import org.lance.memwal.ShardWriterConfig;

/**
 * The ceiling of the checkpoint write benchmark: a MemWAL put loop written straight against the Lance Java API, with
 * none of the checkpoint module's code. It creates its own dataset with the log's schema (read from a log's dataset
 * through Lance, primary key metadata included), initializes MemWAL, opens one shard writer with durable writes (the
 * setting the log uses) and puts each batch as one Arrow record batch, converted from the events' columns into one
 * set of vectors (new buffers per batch). No fencing check, no memtable flush until {@link #close()}, no group
 * commit.
 */
final class RawMemWalPuts implements AutoCloseable {
    private final BufferAllocator allocator;
    private final Dataset dataset;
    private final ShardWriter writer;
    private final VectorSchemaRoot root;

    /** Creates an empty MemWAL dataset at {@code uri} with the schema of the dataset at {@code schemaFrom}. */
    RawMemWalPuts(BufferAllocator allocator, String schemaFrom, String uri) throws Exception {
        this.allocator = allocator;
        Schema schema;
        try (Dataset src = Dataset.open().allocator(allocator).uri(schemaFrom).build()) {
            schema = src.getSchema();
        }
        if (schema.getFields().size() != COLUMN_NAMES.size()) {
            throw new IllegalStateException(
                    "the log has " + schema.getFields().size() + " columns, the raw loop " + COLUMN_NAMES.size());
        }
        for (int c = 0; c < COLUMN_NAMES.size(); c++) {
            if (!schema.getFields().get(c).getName().equals(COLUMN_NAMES.get(c))) {
                throw new IllegalStateException("column " + c + " is "
                        + schema.getFields().get(c).getName() + ", the raw loop expects " + COLUMN_NAMES.get(c));
            }
        }
        this.root = VectorSchemaRoot.create(schema, allocator);
        root.allocateNew();
        root.setRowCount(0);
        try (ArrowReader empty = new OneBatch(allocator, root)) {
            Dataset.write()
                    .allocator(allocator)
                    .reader(empty)
                    .uri(uri)
                    .mode(WriteParams.WriteMode.CREATE)
                    .enableStableRowIds(true)
                    .execute()
                    .close();
        }
        this.dataset = Dataset.open().allocator(allocator).uri(uri).build();
        dataset.initializeMemWal(new InitializeMemWalParams());
        this.writer = dataset.memWalWriter(
                UUID.randomUUID().toString(),
                new ShardWriterConfig()
                        .withDurableWrite(true)
                        .withMaxMemtableBatches(1_000_000)
                        .withMaxMemtableSize(512L << 20));
    }

    /** One durable put of {@code events}. */
    void put(List<CheckpointEvent> events) {
        fill(events);
        // The exported stream takes the reader over and closes it (Lance's put closes the stream).
        writer.put(new OneBatch(allocator, root));
    }

    private void fill(List<CheckpointEvent> events) {
        // New buffers for every batch: Lance's memtable may keep the buffers it imported through the C data interface
        // (zero copy) until it flushes, so a put's buffers are never written again.
        for (FieldVector v : root.getFieldVectors()) {
            v.clear();
            v.setInitialCapacity(events.size());
            v.allocateNew();
        }
        for (int c = 0; c < COLUMNS.size(); c++) {
            FieldVector v = root.getVector(c);
            Function<CheckpointEvent, Object> col = COLUMNS.get(c);
            for (int i = 0; i < events.size(); i++) {
                set(v, i, col.apply(events.get(i)));
            }
            v.setValueCount(events.size());
        }
        root.setRowCount(events.size());
    }

    private static void set(FieldVector v, int i, Object value) {
        if (value == null) {
            if (v instanceof org.apache.arrow.vector.BaseFixedWidthVector f) {
                f.setNull(i);
            } else if (v instanceof org.apache.arrow.vector.BaseVariableWidthVector w) {
                w.setNull(i);
            } else if (v instanceof org.apache.arrow.vector.BaseLargeVariableWidthVector w) {
                w.setNull(i);
            } else {
                throw new IllegalStateException("unexpected vector " + v.getClass());
            }
            return;
        }
        if (v instanceof VarCharVector x) {
            x.setSafe(i, ((String) value).getBytes(StandardCharsets.UTF_8));
        } else if (v instanceof LargeVarCharVector x) {
            x.setSafe(i, ((String) value).getBytes(StandardCharsets.UTF_8));
        } else if (v instanceof BigIntVector x) {
            x.setSafe(i, (Long) value);
        } else if (v instanceof IntVector x) {
            x.setSafe(i, (Integer) value);
        } else if (v instanceof Float8Vector x) {
            x.setSafe(i, (Double) value);
        } else if (v instanceof BitVector x) {
            x.setSafe(i, (Boolean) value ? 1 : 0);
        } else if (v instanceof TimeStampMicroTZVector x) {
            x.setSafe(i, (Long) value);
        } else {
            throw new IllegalStateException(
                    "the raw loop writes no " + v.getClass().getSimpleName());
        }
    }

    private static final List<String> COLUMN_NAMES = List.of(
            "event_id",
            "item_id",
            "root_item_id",
            "parent_item_id",
            "item_seq",
            "checkpoint_id",
            "event_type",
            "step_name",
            "step_index",
            "step_instance_id",
            "iteration",
            "attempt",
            "run_id",
            "writer_epoch",
            "field_name",
            "field_type",
            "codec_version",
            "value_kind",
            "value_i64",
            "value_f64",
            "value_bool",
            "value_str",
            "value_json",
            "value_blob",
            "payload_size",
            "payload_checksum",
            "query_tags_json",
            "terminal",
            "error_type",
            "error_dump",
            "traceback",
            "event_ts",
            "schema_version");

    /** The log's columns in schema order, as plain values (the benchmark's batches carry no blobs). */
    private static final List<Function<CheckpointEvent, Object>> COLUMNS = List.of(
            e -> e.eventId().value(),
            CheckpointEvent::itemId,
            CheckpointEvent::rootItemId,
            CheckpointEvent::parentItemId,
            e -> e.itemSeq().value(),
            e -> e.checkpointId().value(),
            e -> e.eventType().name(),
            CheckpointEvent::stepName,
            CheckpointEvent::stepIndex,
            CheckpointEvent::stepInstanceId,
            CheckpointEvent::iteration,
            CheckpointEvent::attempt,
            CheckpointEvent::runId,
            e -> e.writerEpoch().value(),
            CheckpointEvent::fieldName,
            CheckpointEvent::fieldType,
            CheckpointEvent::codecVersion,
            e -> e.value() == null ? null : e.value().kind(),
            e -> e.value() instanceof FieldValue.IntValue x ? x.value() : null,
            e -> e.value() instanceof FieldValue.FloatValue x ? x.value() : null,
            e -> e.value() instanceof FieldValue.BoolValue x ? x.value() : null,
            e -> e.value() instanceof FieldValue.StrValue x ? x.value() : null,
            e -> e.value() instanceof FieldValue.JsonValue x ? x.json() : null,
            e -> {
                if (e.value() instanceof FieldValue.BlobValue) {
                    throw new IllegalStateException("no blobs here");
                }
                return null;
            },
            e -> null, // payload_size
            e -> null, // payload_checksum
            CheckpointEvent::queryTagsJson,
            CheckpointEvent::terminal,
            CheckpointEvent::errorType,
            CheckpointEvent::errorDump,
            CheckpointEvent::traceback,
            e -> e.eventTs().getEpochSecond() * 1_000_000L + e.eventTs().getNano() / 1000,
            CheckpointEvent::schemaVersion);

    /** Closes the shard writer, which flushes its memtable into a generation (what the loop left undone). */
    @Override
    public void close() {
        writer.close();
        dataset.close();
        root.close();
    }

    /** An Arrow reader that yields the current contents of one root once, without copying its buffers. */
    private static final class OneBatch extends ArrowReader {
        private final VectorSchemaRoot source;
        private boolean done;

        OneBatch(BufferAllocator allocator, VectorSchemaRoot source) {
            super(allocator);
            this.source = source;
        }

        @Override
        public boolean loadNextBatch() {
            if (done) {
                return false;
            }
            done = true;
            try (ArrowRecordBatch batch = new VectorUnloader(source).getRecordBatch()) {
                loadRecordBatch(batch);
            }
            return true;
        }

        @Override
        public long bytesRead() {
            return 0;
        }

        @Override
        protected void closeReadSource() {}

        @Override
        protected Schema readSchema() {
            return source.getSchema();
        }
    }
}
