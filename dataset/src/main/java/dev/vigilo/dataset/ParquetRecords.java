package dev.vigilo.dataset;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.ParquetDecodingException;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.GroupType;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;

/**
 * The rows of a Parquet upload (one {@code .parquet} file, or every {@code .parquet} file under a directory, as a
 * Hugging Face dataset's shards, in path order) as JSON lines, one per row: without a {@link CaseMap} the row's
 * columns are the case's fields (a null column left out); with one, the row is a record mapped as a JSON lines
 * record is ({@link MappedCases#caseLine}), and only the mapped columns are read.
 *
 * <p>Values follow docs/formats/dataset.md ("Parquet"): strings, integers, floats, booleans, decimals, lists, structs
 * and maps become their JSON values, dates, times and timestamps ISO-8601 text, a JSON-annotated string the JSON it
 * holds; raw bytes, INT96, FLOAT16, NaN and infinities are refused at their row ({@code FILE: row group G, row R:
 * column "C": problem}, both counted from 0 as pyarrow does). Not thread-safe.
 */
final class ParquetRecords implements MappedCases.Lines {
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final List<Path> shards;
    private final Optional<CaseMap> map;
    private int shard = -1;
    private ParquetFileReader reader;
    private MessageType schema;
    private MessageType projection;
    private RecordReader<Group> records;
    private int rowGroup;
    private long rowsInGroup;
    private long row;

    ParquetRecords(Path source, Optional<CaseMap> map) {
        this.shards = shards(source);
        this.map = map;
    }

    /**
     * The Parquet files of {@code source}: itself, or the {@code .parquet} files under a directory, sorted by their
     * path (so {@code train-00000-of-00002.parquet} comes first).
     */
    static List<Path> shards(Path source) {
        if (!Files.isDirectory(source)) {
            return List.of(source);
        }
        List<Path> found;
        try (Stream<Path> walk = Files.walk(source)) {
            found = walk.filter(p -> Files.isRegularFile(p)
                            && p.getFileName()
                                    .toString()
                                    .toLowerCase(java.util.Locale.ROOT)
                                    .endsWith(".parquet"))
                    .sorted(Comparator.comparing(p -> source.relativize(p).toString()))
                    .toList();
        } catch (IOException e) {
            throw new dev.vigilo.common.errors.UnavailableException("cannot list " + source + ": " + e.getMessage(), e);
        }
        if (found.isEmpty()) {
            throw new InvalidDatasetException(
                    source, 0, 0, "the directory holds no .parquet file; give a Parquet file or a directory of shards");
        }
        return found;
    }

    /**
     * Where the row yielded as JSON line {@code line} (1-based over every shard) is: its shard, row group and row in
     * the group (both from 0); empty when the shards hold fewer rows.
     */
    static Optional<Location> locate(Path source, long line) {
        long before = 0;
        for (Path shard : shards(source)) {
            try (ParquetFileReader r = open(shard)) {
                List<BlockMetaData> groups = r.getRowGroups();
                for (int g = 0; g < groups.size(); g++) {
                    long rows = groups.get(g).getRowCount();
                    if (line <= before + rows) {
                        return Optional.of(new Location(shard, g, line - before - 1));
                    }
                    before += rows;
                }
            } catch (IOException | RuntimeException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** A row of a Parquet upload: the shard, the row group (from 0) and the row in it (from 0). */
    record Location(Path shard, int rowGroup, long row) {
        /** {@code row group G, row R}. */
        String words() {
            return "row group " + rowGroup + ", row " + row;
        }

        InvalidDatasetException error(String problem) {
            return new InvalidDatasetException(shard, 0, 0, words() + ": " + problem);
        }
    }

    @Override
    public byte[] next() throws IOException {
        while (records == null || row == rowsInGroup) {
            if (!advance()) {
                return null;
            }
        }
        Location at = new Location(shards.get(shard), rowGroup, row);
        Group g;
        try {
            g = records.read();
        } catch (ParquetDecodingException e) {
            throw new RecordProblem(at.error("the row cannot be decoded (" + e.getMessage() + "); check the file"));
        }
        row++;
        ObjectNode record = object(g, projection, at, "");
        if (map.isEmpty()) {
            byte[] json = JSON.writeValueAsBytes(record);
            byte[] line = new byte[json.length + 1];
            System.arraycopy(json, 0, line, 0, json.length);
            line[json.length] = '\n';
            return line;
        }
        JsonNode id = record.get(map.get().idSource());
        String named = id != null && id.isValueNode() ? "record \"" + id.asText() + "\": " : "";
        return MappedCases.caseLine(map.get(), e -> {
            JsonNode v = record.get(e.source());
            if (e.json() && v != null && v.isTextual()) {
                try {
                    return JSON.readTree(v.asText());
                } catch (JsonProcessingException x) {
                    throw new RecordProblem(at.error(named + "column \"" + e.source() + "\" (mapped onto " + e.target()
                            + " as JSON) is not JSON: " + x.getOriginalMessage()));
                }
            }
            return v;
        });
    }

    /** Moves to the next row group, opening the next shard when one is done; false after the last. */
    private boolean advance() throws IOException {
        while (true) {
            if (reader != null) {
                PageReadStore pages = readGroup();
                if (pages != null) {
                    rowGroup++;
                    row = 0;
                    rowsInGroup = pages.getRowCount();
                    records = new ColumnIOFactory()
                            .getColumnIO(projection, schema)
                            .getRecordReader(pages, new GroupRecordConverter(projection));
                    return true;
                }
                reader.close();
                reader = null;
            }
            if (shard + 1 >= shards.size()) {
                return false;
            }
            shard++;
            Path file = shards.get(shard);
            try {
                reader = open(file);
            } catch (IOException e) {
                if (!Files.isReadable(file)) {
                    throw e;
                }
                throw new RecordProblem(new InvalidDatasetException(
                        file, 0, 0, "not a Parquet file (" + e.getMessage() + "); check the file"));
            } catch (RuntimeException e) {
                throw new RecordProblem(new InvalidDatasetException(
                        file, 0, 0, "not a Parquet file (" + e.getMessage() + "); check the file"));
            }
            schema = reader.getFooter().getFileMetaData().getSchema();
            projection = projection(file);
            reader.setRequestedSchema(projection);
            rowGroup = -1;
            records = null;
        }
    }

    private PageReadStore readGroup() throws IOException {
        try {
            return reader.readNextRowGroup();
        } catch (ParquetDecodingException | IllegalArgumentException e) {
            throw new RecordProblem(new InvalidDatasetException(
                    shards.get(shard),
                    0,
                    0,
                    "row group " + (rowGroup + 1) + " cannot be read (" + e.getMessage() + "); check the file"));
        }
    }

    /** The columns to read: all of them, or the map's sources (each must be a top-level column). */
    private MessageType projection(Path file) {
        if (map.isEmpty()) {
            return schema;
        }
        List<Type> columns = new ArrayList<>();
        for (CaseMap.Entry e : map.get().entries()) {
            if (!schema.containsField(e.source())) {
                List<String> names =
                        schema.getFields().stream().map(Type::getName).toList();
                throw new RecordProblem(new InvalidDatasetException(
                        file,
                        0,
                        0,
                        "--map names column \"" + e.source() + "\", which the file does not have (columns: "
                                + String.join(", ", names) + ")"));
            }
            Type column = schema.getType(e.source());
            if (!columns.contains(column)) {
                columns.add(column);
            }
        }
        // In the file's order, as the record reader expects.
        columns.sort(Comparator.comparingInt(t -> schema.getFieldIndex(t.getName())));
        return new MessageType(schema.getName(), columns);
    }

    private static ParquetFileReader open(Path file) throws IOException {
        // A plain (Hadoop-free) configuration: the file is read through LocalInputFile, never a Hadoop file system.
        return ParquetFileReader.open(
                new LocalInputFile(file),
                ParquetReadOptions.builder(new PlainParquetConfiguration()).build());
    }

    /** A struct (or the row) as an object: a null field is left out, a repeated field is an array. */
    private static ObjectNode object(Group g, GroupType type, Location at, String path) {
        ObjectNode o = NODES.objectNode();
        for (int i = 0; i < type.getFieldCount(); i++) {
            Type f = type.getType(i);
            String name = path + f.getName();
            int n = g.getFieldRepetitionCount(i);
            if (f.isRepetition(Type.Repetition.REPEATED)) {
                ArrayNode a = o.putArray(f.getName());
                for (int j = 0; j < n; j++) {
                    a.add(value(g, f, i, j, at, name));
                }
            } else if (n > 0) {
                o.set(f.getName(), value(g, f, i, 0, at, name));
            }
        }
        return o;
    }

    private static JsonNode value(Group g, Type type, int field, int index, Location at, String name) {
        if (type.isPrimitive()) {
            return primitive(g, type.asPrimitiveType(), field, index, at, name);
        }
        Group child = g.getGroup(field, index);
        GroupType t = type.asGroupType();
        LogicalTypeAnnotation a = t.getLogicalTypeAnnotation();
        if (a instanceof LogicalTypeAnnotation.ListLogicalTypeAnnotation && t.getFieldCount() == 1) {
            return list(child, t, at, name);
        }
        if ((a instanceof LogicalTypeAnnotation.MapLogicalTypeAnnotation
                        || a instanceof LogicalTypeAnnotation.MapKeyValueTypeAnnotation)
                && t.getFieldCount() == 1
                && !t.getType(0).isPrimitive()) {
            return map(child, t, at, name);
        }
        return object(child, t, at, name + ".");
    }

    /** A LIST: the three-level form ({@code repeated group list { element }}) or the legacy two-level one. */
    private static ArrayNode list(Group g, GroupType t, Location at, String name) {
        ArrayNode a = NODES.arrayNode();
        Type repeated = t.getType(0);
        int n = g.getFieldRepetitionCount(0);
        boolean threeLevel = !repeated.isPrimitive()
                && repeated.asGroupType().getFieldCount() == 1
                && !repeated.getName().equals("array")
                && !repeated.getName().equals(t.getName() + "_tuple");
        for (int j = 0; j < n; j++) {
            if (!threeLevel) {
                a.add(value(g, repeated, 0, j, at, name));
                continue;
            }
            Group element = g.getGroup(0, j);
            if (element.getFieldRepetitionCount(0) == 0) {
                a.addNull();
            } else {
                a.add(value(element, repeated.asGroupType().getType(0), 0, 0, at, name));
            }
        }
        return a;
    }

    /** A MAP whose keys are text (or integers, written as text) as an object. */
    private static ObjectNode map(Group g, GroupType t, Location at, String name) {
        ObjectNode o = NODES.objectNode();
        GroupType entry = t.getType(0).asGroupType();
        int n = g.getFieldRepetitionCount(0);
        for (int j = 0; j < n; j++) {
            Group kv = g.getGroup(0, j);
            JsonNode key = value(kv, entry.getType(0), 0, 0, at, name);
            if (!key.isTextual() && !key.isIntegralNumber()) {
                throw new RecordProblem(at.error("column \"" + name + "\": a map whose keys are not text or"
                        + " integers has no JSON form; map other columns with --map"));
            }
            JsonNode v = entry.getFieldCount() > 1 && kv.getFieldRepetitionCount(1) > 0
                    ? value(kv, entry.getType(1), 1, 0, at, name)
                    : NODES.nullNode();
            o.set(key.asText(), v);
        }
        return o;
    }

    private static JsonNode primitive(Group g, PrimitiveType p, int field, int index, Location at, String name) {
        LogicalTypeAnnotation a = p.getLogicalTypeAnnotation();
        switch (p.getPrimitiveTypeName()) {
            case BOOLEAN:
                return NODES.booleanNode(g.getBoolean(field, index));
            case INT32: {
                int v = g.getInteger(field, index);
                if (a instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i && !i.isSigned()) {
                    return NODES.numberNode(Integer.toUnsignedLong(v));
                }
                if (a instanceof LogicalTypeAnnotation.DateLogicalTypeAnnotation) {
                    return NODES.textNode(LocalDate.ofEpochDay(v).toString());
                }
                if (a instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation d) {
                    return NODES.numberNode(BigDecimal.valueOf(v, d.getScale()));
                }
                if (a instanceof LogicalTypeAnnotation.TimeLogicalTypeAnnotation) {
                    return NODES.textNode(time(v * 1_000_000L));
                }
                return NODES.numberNode(v);
            }
            case INT64: {
                long v = g.getLong(field, index);
                if (a instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation i && !i.isSigned()) {
                    return NODES.numberNode(new BigInteger(Long.toUnsignedString(v)));
                }
                if (a instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation d) {
                    return NODES.numberNode(BigDecimal.valueOf(v, d.getScale()));
                }
                if (a instanceof LogicalTypeAnnotation.TimeLogicalTypeAnnotation t) {
                    return NODES.textNode(time(nanos(v, t.getUnit())));
                }
                if (a instanceof LogicalTypeAnnotation.TimestampLogicalTypeAnnotation t) {
                    return NODES.textNode(timestamp(v, t));
                }
                return NODES.numberNode(v);
            }
            case FLOAT: {
                float v = g.getFloat(field, index);
                if (!Float.isFinite(v)) {
                    throw notFinite(at, name, v);
                }
                return NODES.numberNode(v);
            }
            case DOUBLE: {
                double v = g.getDouble(field, index);
                if (!Double.isFinite(v)) {
                    throw notFinite(at, name, v);
                }
                return NODES.numberNode(v);
            }
            case INT96:
                throw new RecordProblem(at.error("column \"" + name + "\" is an INT96 timestamp, which Vigilo does not"
                        + " read; write the file with INT64 timestamps (pyarrow's default)"));
            case BINARY:
            case FIXED_LEN_BYTE_ARRAY:
            default:
                return binary(g.getBinary(field, index), a, at, name);
        }
    }

    private static JsonNode binary(Binary b, LogicalTypeAnnotation a, Location at, String name) {
        if (a instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation
                || a instanceof LogicalTypeAnnotation.EnumLogicalTypeAnnotation) {
            return NODES.textNode(text(b, at, name));
        }
        if (a instanceof LogicalTypeAnnotation.JsonLogicalTypeAnnotation) {
            String text = text(b, at, name);
            try {
                return JSON.readTree(text);
            } catch (JsonProcessingException e) {
                throw new RecordProblem(
                        at.error("column \"" + name + "\" is typed JSON but holds no JSON: " + e.getOriginalMessage()));
            }
        }
        if (a instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation d) {
            return NODES.numberNode(new BigDecimal(new BigInteger(b.getBytes()), d.getScale()));
        }
        if (a instanceof LogicalTypeAnnotation.UUIDLogicalTypeAnnotation) {
            ByteBuffer bytes = b.toByteBuffer();
            return NODES.textNode(new UUID(bytes.getLong(), bytes.getLong()).toString());
        }
        throw new RecordProblem(at.error("column \"" + name + "\" holds raw bytes ("
                + (a == null ? "no string type" : a.toString()) + "), which have no JSON form; store text, or leave"
                + " the column out with --map"));
    }

    private static String text(Binary b, Location at, String name) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(b.toByteBuffer())
                    .toString();
        } catch (CharacterCodingException e) {
            throw new RecordProblem(at.error("column \"" + name + "\" is typed as text but is not UTF-8"));
        }
    }

    private static RecordProblem notFinite(Location at, String name, double v) {
        return new RecordProblem(at.error(
                "column \"" + name + "\" holds " + v + ", which JSON cannot hold; replace it with null or a number"));
    }

    private static long nanos(long v, LogicalTypeAnnotation.TimeUnit unit) {
        return switch (unit) {
            case MILLIS -> v * 1_000_000L;
            case MICROS -> v * 1_000L;
            case NANOS -> v;
        };
    }

    private static String time(long nanoOfDay) {
        return LocalTime.ofNanoOfDay(nanoOfDay).format(DateTimeFormatter.ISO_LOCAL_TIME);
    }

    /** ISO-8601: with {@code Z} when the timestamp is UTC-adjusted, without a zone when it is local. */
    private static String timestamp(long v, LogicalTypeAnnotation.TimestampLogicalTypeAnnotation t) {
        long seconds;
        long nanos;
        switch (t.getUnit()) {
            case MILLIS -> {
                seconds = Math.floorDiv(v, 1_000L);
                nanos = Math.floorMod(v, 1_000L) * 1_000_000L;
            }
            case MICROS -> {
                seconds = Math.floorDiv(v, 1_000_000L);
                nanos = Math.floorMod(v, 1_000_000L) * 1_000L;
            }
            default -> {
                seconds = Math.floorDiv(v, 1_000_000_000L);
                nanos = Math.floorMod(v, 1_000_000_000L);
            }
        }
        if (t.isAdjustedToUTC()) {
            return Instant.ofEpochSecond(seconds, nanos).toString();
        }
        return LocalDateTime.ofEpochSecond(seconds, (int) nanos, ZoneOffset.UTC)
                .format(DateTimeFormatter.ISO_LOCAL_DATE_TIME);
    }

    @Override
    public void close() throws IOException {
        if (reader != null) {
            reader.close();
            reader = null;
        }
    }
}
