package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.checkpoint.FieldState;
import dev.vigilo.checkpoint.FieldValue;
import dev.vigilo.checkpoint.ItemState;
import java.io.IOException;
import java.io.OutputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.PositionOutputStream;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;

/**
 * Completed leaf items as one Parquet file (docs/datagen.md, "Parquet export"): the records {@link DatasetExport}
 * maps, one row each, sorted by id. Column {@code item_id} (required text), then one optional column per field name
 * in name order, typed from the field kinds all items hold: {@code int} INT64, {@code float} (or int and float)
 * DOUBLE, {@code bool} BOOLEAN, {@code str} STRING; anything else (JSON values, appended fields, blob references,
 * mixed kinds) a STRING annotated JSON holding the value's canonical JSON. An item without the field has a null.
 * The file's key-value metadata records {@code vigilo.export.version} (1), the pipeline and the experiment.
 */
final class ParquetExport {
    /** The version of this layout, in the file's key-value metadata. */
    static final int VERSION = 1;

    private enum Kind {
        INT,
        FLOAT,
        BOOL,
        STR,
        JSON
    }

    private ParquetExport() {}

    /** Writes {@code items} to {@code out} (the caller's crash-safe stream); returns the rows written. */
    static long write(List<ItemState> items, String pipeline, String experiment, OutputStream out) throws IOException {
        Map<String, Kind> kinds = kinds(items);
        Types.MessageTypeBuilder b = Types.buildMessage();
        b.required(PrimitiveTypeName.BINARY)
                .as(LogicalTypeAnnotation.stringType())
                .named("item_id");
        for (Map.Entry<String, Kind> c : kinds.entrySet()) {
            switch (c.getValue()) {
                case INT ->
                    b.optional(PrimitiveTypeName.INT64)
                            .as(LogicalTypeAnnotation.intType(64, true))
                            .named(c.getKey());
                case FLOAT -> b.optional(PrimitiveTypeName.DOUBLE).named(c.getKey());
                case BOOL -> b.optional(PrimitiveTypeName.BOOLEAN).named(c.getKey());
                case STR ->
                    b.optional(PrimitiveTypeName.BINARY)
                            .as(LogicalTypeAnnotation.stringType())
                            .named(c.getKey());
                case JSON ->
                    b.optional(PrimitiveTypeName.BINARY)
                            .as(LogicalTypeAnnotation.jsonType())
                            .named(c.getKey());
            }
        }
        MessageType schema = b.named("vigilo_datagen_export");
        SimpleGroupFactory rows = new SimpleGroupFactory(schema);
        long n = 0;
        try (ParquetWriter<Group> writer = ExampleParquetWriter.builder(new StreamFile(out))
                .withConf(new PlainParquetConfiguration())
                .withType(schema)
                .withCompressionCodec(CompressionCodecName.SNAPPY)
                .withExtraMetaData(Map.of(
                        "vigilo.export.version", Integer.toString(VERSION),
                        "vigilo.pipeline", pipeline,
                        "vigilo.experiment", experiment))
                .build()) {
            for (ItemState s : items) {
                Group row = rows.newGroup().append("item_id", s.item().itemId());
                ObjectNode json = Json.fields(s.fields());
                for (Map.Entry<String, Kind> c : kinds.entrySet()) {
                    FieldState f = s.fields().get(c.getKey());
                    if (f == null) {
                        continue;
                    }
                    FieldValue v = f.last();
                    switch (c.getValue()) {
                        case INT -> row.append(c.getKey(), ((FieldValue.IntValue) v).value());
                        case FLOAT ->
                            row.append(
                                    c.getKey(),
                                    v instanceof FieldValue.IntValue i
                                            ? (double) i.value()
                                            : ((FieldValue.FloatValue) v).value());
                        case BOOL -> row.append(c.getKey(), ((FieldValue.BoolValue) v).value());
                        case STR -> row.append(c.getKey(), ((FieldValue.StrValue) v).value());
                        case JSON -> row.append(c.getKey(), Json.canonical(json.get(c.getKey())));
                    }
                }
                writer.write(row);
                n++;
            }
        }
        return n;
    }

    /** Each field name's column kind over every item (sorted by name; a field named item_id is the id's). */
    private static Map<String, Kind> kinds(List<ItemState> items) {
        Map<String, Set<String>> seen = new HashMap<>();
        for (ItemState s : items) {
            s.fields()
                    .forEach((name, f) -> seen.computeIfAbsent(name, k -> new TreeSet<>())
                            .add(f.appended() ? "appended" : f.last().kind()));
        }
        seen.remove("item_id"); // the record's item_id is the item's id (as DatasetExport's records)
        Map<String, Kind> kinds = new TreeMap<>();
        seen.forEach((name, k) -> kinds.put(name, kind(k)));
        return kinds;
    }

    private static Kind kind(Set<String> k) {
        if (k.equals(Set.of("int"))) {
            return Kind.INT;
        }
        if (k.equals(Set.of("float")) || k.equals(Set.of("int", "float"))) {
            return Kind.FLOAT;
        }
        if (k.equals(Set.of("bool"))) {
            return Kind.BOOL;
        }
        if (k.equals(Set.of("str"))) {
            return Kind.STR;
        }
        return Kind.JSON;
    }

    /**
     * The crash-safe stream of {@code OutputFiles.write} as parquet's output file: written once, front to back
     * (parquet needs nothing else of it than the position).
     */
    private static final class StreamFile implements OutputFile {
        private final OutputStream out;

        StreamFile(OutputStream out) {
            this.out = out;
        }

        @Override
        public PositionOutputStream create(long blockSizeHint) {
            return new PositionOutputStream() {
                private long pos;

                @Override
                public long getPos() {
                    return pos;
                }

                @Override
                public void write(int b) throws IOException {
                    out.write(b);
                    pos++;
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    out.write(b, off, len);
                    pos += len;
                }

                @Override
                public void flush() throws IOException {
                    out.flush();
                }

                @Override
                public void close() {
                    // The stream is the caller's: OutputFiles fsyncs and renames it after the content is written.
                }
            };
        }

        @Override
        public PositionOutputStream createOrOverwrite(long blockSizeHint) {
            return create(blockSizeHint);
        }

        @Override
        public boolean supportsBlockSize() {
            return false;
        }

        @Override
        public long defaultBlockSize() {
            return 0;
        }

        @Override
        public String getPath() {
            return "export.parquet";
        }
    }
}
