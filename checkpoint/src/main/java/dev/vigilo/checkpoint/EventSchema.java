package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.DamagedException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/** The log's Arrow schema, column for column with the spec, and the row codec. Stateless. */
final class EventSchema {
    private EventSchema() {}

    /**
     * Lance reads this field metadata as "this column is the primary key" (used by MemWAL's LSM
     * de-duplication).
     */
    static final String PK_META = "lance-schema:unenforced-primary-key";

    static final Schema SCHEMA = new Schema(List.of(
            new Field("event_id", new FieldType(false, ArrowType.Utf8.INSTANCE, null, Map.of(PK_META, "true")), null),
            req("item_id", ArrowType.Utf8.INSTANCE),
            req("root_item_id", ArrowType.Utf8.INSTANCE),
            opt("parent_item_id", ArrowType.Utf8.INSTANCE),
            req("item_seq", new ArrowType.Int(64, true)),
            req("checkpoint_id", ArrowType.Utf8.INSTANCE),
            req("event_type", ArrowType.Utf8.INSTANCE),
            opt("step_name", ArrowType.Utf8.INSTANCE),
            opt("step_index", new ArrowType.Int(64, true)),
            opt("step_instance_id", ArrowType.Utf8.INSTANCE),
            opt("iteration", new ArrowType.Int(64, true)),
            req("attempt", new ArrowType.Int(32, true)),
            req("run_id", ArrowType.Utf8.INSTANCE),
            req("writer_epoch", ArrowType.Utf8.INSTANCE),
            opt("field_name", ArrowType.Utf8.INSTANCE),
            opt("field_type", ArrowType.Utf8.INSTANCE),
            opt("codec_version", new ArrowType.Int(32, true)),
            opt("value_kind", ArrowType.Utf8.INSTANCE),
            opt("value_i64", new ArrowType.Int(64, true)),
            opt("value_f64", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
            opt("value_bool", ArrowType.Bool.INSTANCE),
            opt("value_str", ArrowType.LargeUtf8.INSTANCE),
            opt("value_json", ArrowType.LargeUtf8.INSTANCE),
            opt("value_blob", ArrowType.LargeBinary.INSTANCE),
            opt("payload_size", new ArrowType.Int(64, true)),
            opt("payload_checksum", ArrowType.Utf8.INSTANCE),
            opt("query_tags_json", ArrowType.LargeUtf8.INSTANCE),
            opt("terminal", ArrowType.Utf8.INSTANCE),
            opt("error_type", ArrowType.Utf8.INSTANCE),
            opt("error_dump", ArrowType.LargeUtf8.INSTANCE),
            opt("traceback", ArrowType.LargeUtf8.INSTANCE),
            req("event_ts", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")),
            req("schema_version", new ArrowType.Int(32, true))));

    /** Every column, in schema order. */
    static final List<String> COLUMNS =
            SCHEMA.getFields().stream().map(Field::getName).toList();

    /** Every column except value_blob: what normal fold and trajectory reads project. */
    static final List<String> LIGHT_COLUMNS = SCHEMA.getFields().stream()
            .map(Field::getName)
            .filter(n -> !n.equals("value_blob"))
            .toList();

    private static Field req(String name, ArrowType t) {
        return new Field(name, new FieldType(false, t, null), null);
    }

    private static Field opt(String name, ArrowType t) {
        return new Field(name, FieldType.nullable(t), null);
    }

    /** Checks a dataset's schema against ours: every column present with the same type. */
    static void check(Schema actual) {
        for (Field f : SCHEMA.getFields()) {
            Field a;
            try {
                a = actual.findField(f.getName());
            } catch (IllegalArgumentException e) {
                throw new DamagedException("checkpoint log is missing column " + f.getName());
            }
            if (!a.getType().equals(f.getType())) {
                throw new DamagedException("checkpoint log column "
                        + f.getName()
                        + " has type "
                        + a.getType()
                        + ", expected "
                        + f.getType());
            }
        }
    }

    /**
     * A reader that yields {@code events} as one record batch, straight from the vectors they were written into (no
     * serialization). Closing the reader frees the vectors; a consumer that imported them through the C data
     * interface (Lance) keeps its own reference to their buffers.
     */
    static ArrowReader reader(BufferAllocator alloc, List<CheckpointEvent> events) {
        VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, alloc);
        try {
            fill(root, events);
        } catch (RuntimeException e) {
            root.close();
            throw e;
        }
        return new BatchesReader(alloc, List.of(root));
    }

    /**
     * A reader that yields {@code batches} (roots of {@link #SCHEMA}) in order, without copying them; it owns them and
     * closing it frees every one.
     */
    static ArrowReader readerOf(BufferAllocator alloc, List<VectorSchemaRoot> batches) {
        return new BatchesReader(alloc, List.copyOf(batches));
    }

    /** Yields filled roots once each, in order; owns them. */
    private static final class BatchesReader extends ArrowReader {
        private final List<VectorSchemaRoot> sources;
        private int next;

        BatchesReader(BufferAllocator alloc, List<VectorSchemaRoot> sources) {
            super(alloc);
            this.sources = sources;
        }

        @Override
        public boolean loadNextBatch() {
            if (next == sources.size()) {
                return false;
            }
            // Transfers nothing: the reader's root takes references to the same buffers.
            try (ArrowRecordBatch batch = new VectorUnloader(sources.get(next++)).getRecordBatch()) {
                loadRecordBatch(batch);
            }
            return true;
        }

        @Override
        public long bytesRead() {
            return 0;
        }

        @Override
        protected void closeReadSource() {
            sources.forEach(VectorSchemaRoot::close);
        }

        @Override
        protected Schema readSchema() {
            return SCHEMA;
        }
    }

    static void fill(VectorSchemaRoot root, List<CheckpointEvent> events) {
        // Sized for this batch: the default capacity (thousands of values per vector, 33 vectors) costs more to
        // allocate and zero than a checkpoint batch costs to fill.
        for (FieldVector v : root.getFieldVectors()) {
            v.setInitialCapacity(Math.max(1, events.size()));
        }
        root.allocateNew();
        for (int i = 0; i < events.size(); i++) {
            CheckpointEvent e = events.get(i);
            str(root, "event_id", i, e.eventId().value());
            str(root, "item_id", i, e.itemId());
            str(root, "root_item_id", i, e.rootItemId());
            str(root, "parent_item_id", i, e.parentItemId());
            i64(root, "item_seq", i, e.itemSeq().value());
            str(root, "checkpoint_id", i, e.checkpointId().value());
            str(root, "event_type", i, e.eventType().name());
            str(root, "step_name", i, e.stepName());
            i64(root, "step_index", i, e.stepIndex());
            str(root, "step_instance_id", i, e.stepInstanceId());
            i64(root, "iteration", i, e.iteration());
            i32(root, "attempt", i, e.attempt());
            str(root, "run_id", i, e.runId());
            str(root, "writer_epoch", i, e.writerEpoch().value());
            str(root, "field_name", i, e.fieldName());
            str(root, "field_type", i, e.fieldType());
            i32(root, "codec_version", i, e.codecVersion());
            FieldValue v = e.value();
            str(root, "value_kind", i, v == null ? null : v.kind());
            i64(root, "value_i64", i, v instanceof FieldValue.IntValue x ? x.value() : null);
            Float8Vector f64 = (Float8Vector) root.getVector("value_f64");
            if (v instanceof FieldValue.FloatValue x) {
                f64.setSafe(i, x.value());
            } else {
                f64.setNull(i);
            }
            BitVector b = (BitVector) root.getVector("value_bool");
            if (v instanceof FieldValue.BoolValue x) {
                b.setSafe(i, x.value() ? 1 : 0);
            } else {
                b.setNull(i);
            }
            str(root, "value_str", i, v instanceof FieldValue.StrValue x ? x.value() : null);
            str(root, "value_json", i, v instanceof FieldValue.JsonValue x ? x.json() : null);
            LargeVarBinaryVector blob = (LargeVarBinaryVector) root.getVector("value_blob");
            if (v instanceof FieldValue.BlobValue x) {
                byte[] bytes = x.bytes();
                blob.setSafe(i, bytes);
                i64(root, "payload_size", i, (long) bytes.length);
                str(root, "payload_checksum", i, "sha256:" + EventIds.sha256Hex(bytes));
            } else if (v instanceof FieldValue.BlobRef) {
                throw new IllegalArgumentException("a BlobRef cannot be written; load the bytes first");
            } else {
                blob.setNull(i);
                i64(root, "payload_size", i, null);
                str(root, "payload_checksum", i, null);
            }
            str(root, "query_tags_json", i, e.queryTagsJson());
            str(root, "terminal", i, e.terminal());
            str(root, "error_type", i, e.errorType());
            str(root, "error_dump", i, e.errorDump());
            str(root, "traceback", i, e.traceback());
            TimeStampMicroTZVector ts = (TimeStampMicroTZVector) root.getVector("event_ts");
            ts.setSafe(
                    i,
                    Math.addExact(
                            Math.multiplyExact(e.eventTs().getEpochSecond(), 1_000_000L),
                            e.eventTs().getNano() / 1000));
            i32(root, "schema_version", i, e.schemaVersion());
        }
        root.setRowCount(events.size());
    }

    /**
     * Decodes the rows of a (possibly projected, blob-less) batch. Rows whose schema_version is
     * newer are rejected.
     */
    static List<CheckpointEvent> decode(VectorSchemaRoot root) {
        List<CheckpointEvent> out = new ArrayList<>(root.getRowCount());
        for (int i = 0; i < root.getRowCount(); i++) {
            int sv = (Integer) get(root, "schema_version", i);
            if (sv > CheckpointBatch.SCHEMA_VERSION) {
                throw new DamagedException("event written with schema_version "
                        + sv
                        + " but this Vigilo reads up to "
                        + CheckpointBatch.SCHEMA_VERSION
                        + "; upgrade Vigilo");
            }
            EventId id = new EventId(s(root, "event_id", i));
            String kind = s(root, "value_kind", i);
            FieldValue v = kind == null
                    ? null
                    : switch (kind) {
                        case "int" -> new FieldValue.IntValue((Long) get(root, "value_i64", i));
                        case "float" -> new FieldValue.FloatValue((Double) get(root, "value_f64", i));
                        case "bool" -> new FieldValue.BoolValue((Boolean) get(root, "value_bool", i));
                        case "str" -> new FieldValue.StrValue(s(root, "value_str", i));
                        case "json" -> new FieldValue.JsonValue(s(root, "value_json", i));
                        case "blob" ->
                            new FieldValue.BlobRef(
                                    id, (Long) get(root, "payload_size", i), s(root, "payload_checksum", i));
                        default -> throw new DamagedException("unknown value_kind '" + kind + "' in event " + id);
                    };
            long micros = (Long) get(root, "event_ts", i);
            out.add(new CheckpointEvent(
                    id,
                    s(root, "item_id", i),
                    s(root, "root_item_id", i),
                    s(root, "parent_item_id", i),
                    new ItemSeq((Long) get(root, "item_seq", i)),
                    new CheckpointId(s(root, "checkpoint_id", i)),
                    EventType.valueOf(s(root, "event_type", i)),
                    s(root, "step_name", i),
                    (Long) get(root, "step_index", i),
                    s(root, "step_instance_id", i),
                    (Long) get(root, "iteration", i),
                    (Integer) get(root, "attempt", i),
                    s(root, "run_id", i),
                    new WriterEpoch(s(root, "writer_epoch", i)),
                    s(root, "field_name", i),
                    s(root, "field_type", i),
                    (Integer) get(root, "codec_version", i),
                    v,
                    s(root, "query_tags_json", i),
                    s(root, "terminal", i),
                    s(root, "error_type", i),
                    s(root, "error_dump", i),
                    s(root, "traceback", i),
                    Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000L),
                    sv));
        }
        return out;
    }

    private static Object get(VectorSchemaRoot root, String col, int i) {
        FieldVector v = root.getVector(col);
        if (v == null) {
            throw new DamagedException("column " + col + " missing from scan");
        }
        if (v.isNull(i)) {
            return null;
        }
        if (v instanceof TimeStampMicroTZVector t) {
            return t.get(i);
        }
        return v.getObject(i);
    }

    private static String s(VectorSchemaRoot root, String col, int i) {
        FieldVector v = root.getVector(col);
        if (v == null) {
            throw new DamagedException("column " + col + " missing from scan");
        }
        if (v.isNull(i)) {
            return null;
        }
        if (v instanceof VarCharVector x) {
            return new String(x.get(i), StandardCharsets.UTF_8);
        }
        if (v instanceof LargeVarCharVector x) {
            return new String(x.get(i), StandardCharsets.UTF_8);
        }
        return v.getObject(i).toString();
    }

    private static void str(VectorSchemaRoot root, String col, int i, String value) {
        FieldVector v = root.getVector(col);
        if (value == null) {
            v.setNull(i);
            return;
        }
        byte[] b = value.getBytes(StandardCharsets.UTF_8);
        if (v instanceof VarCharVector x) {
            x.setSafe(i, b);
        } else {
            ((LargeVarCharVector) v).setSafe(i, b);
        }
    }

    private static void i64(VectorSchemaRoot root, String col, int i, Long value) {
        BigIntVector v = (BigIntVector) root.getVector(col);
        if (value == null) {
            v.setNull(i);
        } else {
            v.setSafe(i, value);
        }
    }

    private static void i32(VectorSchemaRoot root, String col, int i, Integer value) {
        IntVector v = (IntVector) root.getVector(col);
        if (value == null) {
            v.setNull(i);
        } else {
            v.setSafe(i, value);
        }
    }
}
