package dev.vigilo.dataset;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvParser;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Source records mapped onto cases, yielded as JSON lines: the stream an upload reads in place of a JSON lines file
 * when the file is a CSV, or a JSON lines file of records with a {@link CaseMap}. One record gives exactly one line
 * (a blank record or a CSV's header a blank line), so the lines' numbers are the records' numbers; the case's fields
 * come in the order id, input, expected, group, tags, metadata. A record that cannot be mapped (a missing field, a
 * row wider or narrower than the header, a {@code :json} cell that is not JSON) stops the read with a
 * {@link RecordProblem} at the record's line in the file. Not thread-safe.
 */
final class MappedCases extends InputStream {
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final byte[] BLANK = {'\n'};

    /** Yields the next record's JSON line (with its {@code \n}), or null after the last. */
    interface Lines extends AutoCloseable {
        byte[] next() throws IOException;

        @Override
        void close() throws IOException;
    }

    private final Lines lines;
    private byte[] current = new byte[0];
    private int pos;
    private boolean done;

    private MappedCases(Lines lines) {
        this.lines = lines;
    }

    /** The rows of a CSV file as cases: by {@code map}, or by the header's column names without one. */
    static InputStream ofCsv(Path file, InputStream in, Optional<CaseMap> map) throws IOException {
        return new MappedCases(new CsvLines(file, in, map));
    }

    /** The rows of Parquet files ({@link ParquetRecords}) as JSON lines. */
    static InputStream ofParquet(ParquetRecords records) {
        return new MappedCases(records);
    }

    /** The JSON objects of a JSON lines file as cases, by {@code map}. */
    static InputStream ofJsonLines(Path file, InputStream in, CaseMap map) {
        return new MappedCases(new RecordLines(file, in, map));
    }

    /**
     * The line of a CSV file on which the record yielded as line {@code line} starts (line 1: the header); {@code
     * line} itself when the file ends before it.
     */
    static long csvRowLine(InputStream in, long line) throws IOException {
        try (CsvParser p = csvParser(in)) {
            long record = 0;
            JsonToken t;
            while ((t = p.nextToken()) != null) {
                if (t == JsonToken.START_ARRAY && ++record == line) {
                    p.nextToken(); // the row's first cell: the row's start is placed at the end of the line before
                    return p.currentTokenLocation().getLineNr();
                }
            }
        }
        return line;
    }

    @Override
    public int read() throws IOException {
        if (!fill()) {
            return -1;
        }
        return current[pos++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
            return 0;
        }
        if (!fill()) {
            return -1;
        }
        int n = Math.min(len, current.length - pos);
        System.arraycopy(current, pos, b, off, n);
        pos += n;
        return n;
    }

    private boolean fill() throws IOException {
        while (pos == current.length) {
            if (done) {
                return false;
            }
            byte[] next = lines.next();
            if (next == null) {
                done = true;
                return false;
            }
            current = next;
            pos = 0;
        }
        return true;
    }

    @Override
    public void close() throws IOException {
        lines.close();
    }

    private static CsvParser csvParser(InputStream in) throws IOException {
        Reader reader = new InputStreamReader(
                in,
                StandardCharsets.UTF_8
                        .newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT));
        // Without a schema each row is an array of its cells' texts; the header row is read as a row like the others.
        CsvMapper mapper = CsvMapper.builder().build();
        return (CsvParser) mapper.getFactory().createParser(reader);
    }

    /** A case from a record's values, by the map; {@code value} gives a source field's value or throws. */
    static byte[] caseLine(CaseMap map, java.util.function.Function<CaseMap.Entry, JsonNode> value)
            throws JsonProcessingException {
        ObjectNode c = NODES.objectNode();
        ObjectNode metadata = null;
        for (String target : List.of("id", "input", "expected", "group", "tags")) {
            for (CaseMap.Entry e : map.entries()) {
                if (!e.target().equals(target)) {
                    continue;
                }
                JsonNode v = value.apply(e);
                if (v == null || v.isNull() || (!target.equals("id") && !target.equals("input") && empty(v))) {
                    continue;
                }
                c.set(target, target.equals("tags") && v.isTextual() ? tags(v.asText()) : v);
            }
        }
        for (CaseMap.Entry e : map.entries()) {
            Optional<String> key = e.metadataKey();
            if (key.isEmpty()) {
                continue;
            }
            JsonNode v = value.apply(e);
            if (v == null || v.isNull() || empty(v)) {
                continue;
            }
            if (metadata == null) {
                metadata = c.putObject("metadata");
            }
            metadata.set(key.get(), v);
        }
        byte[] json = JSON.writeValueAsBytes(c);
        byte[] line = new byte[json.length + 1];
        System.arraycopy(json, 0, line, 0, json.length);
        line[json.length] = '\n';
        return line;
    }

    private static RecordProblem problem(Path file, long line, int column, String text) {
        return new RecordProblem(new InvalidDatasetException(file, line, column, text));
    }

    private static boolean empty(JsonNode v) {
        return v.isTextual() && v.asText().isEmpty();
    }

    /** A text of tags: separated by {@code ;}, each stripped, empty ones dropped. */
    private static ArrayNode tags(String text) {
        ArrayNode a = NODES.arrayNode();
        for (String t : text.split(";", -1)) {
            if (!t.isBlank()) {
                a.add(t.strip());
            }
        }
        return a;
    }

    /** The rows of a CSV file. */
    private static final class CsvLines implements Lines {
        private final Path file;
        private final CsvParser parser;
        private final Optional<CaseMap> given;
        private CaseMap map;
        private List<String> header;
        private int[] columns;

        CsvLines(Path file, InputStream in, Optional<CaseMap> map) throws IOException {
            this.file = file;
            this.parser = csvParser(in);
            this.given = map;
        }

        @Override
        public byte[] next() throws IOException {
            List<String> row;
            long line;
            try {
                JsonToken t = parser.nextToken();
                if (t == null) {
                    if (header == null) {
                        throw problem(file, 0, 0, "the file holds no rows; put a header row and one case per row");
                    }
                    return null;
                }
                row = new ArrayList<>();
                line = 0;
                while ((t = parser.nextToken()) != JsonToken.END_ARRAY) {
                    if (line == 0) {
                        // The row's first cell: the parser places the row's start at the end of the line before.
                        line = parser.currentTokenLocation().getLineNr();
                    }
                    row.add(parser.getText());
                }
            } catch (CharacterCodingException e) {
                throw problem(file, parser.currentLocation().getLineNr(), 0, "not UTF-8 text; save the file as UTF-8");
            } catch (JsonProcessingException e) {
                throw problem(
                        file,
                        e.getLocation() == null ? 0 : e.getLocation().getLineNr(),
                        0,
                        "not valid CSV: " + e.getOriginalMessage());
            }
            if (header == null) {
                header(row, line);
                return BLANK;
            }
            if (row.size() == 1 && row.get(0).isEmpty() && header.size() > 1) {
                return BLANK;
            }
            if (row.size() != header.size()) {
                throw problem(
                        file,
                        line,
                        0,
                        "the row has " + row.size() + " cells, the header " + header.size()
                                + "; quote cells that hold commas");
            }
            long at = line;
            return caseLine(map, e -> cell(row, e, at));
        }

        private void header(List<String> names, long line) {
            List<String> cleaned = new ArrayList<>(names);
            if (!cleaned.isEmpty() && cleaned.get(0).startsWith("\uFEFF")) {
                // Spreadsheet programs save UTF-8 CSV with a byte-order mark: it is not part of the first name.
                cleaned.set(0, cleaned.get(0).substring(1));
            }
            header = List.copyOf(cleaned);
            if (header.contains("")) {
                throw problem(file, line, 0, "the header row has an empty column name; name every column");
            }
            map = given.orElseGet(() -> CaseMap.ofHeader(header));
            if (given.isEmpty()) {
                List<String> unknown = map.unknownTargets();
                if (!unknown.isEmpty()) {
                    throw problem(
                            file,
                            line,
                            0,
                            "column \"" + unknown.get(0) + "\" is not a case field; name the columns id, input,"
                                    + " expected, group, tags, metadata.KEY, or map them with --map");
                }
                try {
                    map.requireIdAndInput("the header row");
                } catch (RuntimeException e) {
                    throw problem(file, line, 0, e.getMessage() + " (or use --map)");
                }
            }
            columns = new int[map.entries().size()];
            for (int i = 0; i < columns.length; i++) {
                String source = map.entries().get(i).source();
                columns[i] = header.indexOf(source);
                if (columns[i] < 0) {
                    throw problem(
                            file,
                            line,
                            0,
                            "--map names column \"" + source + "\", which the header does not have (columns: "
                                    + String.join(", ", header) + ")");
                }
            }
        }

        private JsonNode cell(List<String> row, CaseMap.Entry e, long line) {
            String text = row.get(columns[map.entries().indexOf(e)]);
            if (!e.json()) {
                return NODES.textNode(text);
            }
            if (text.isBlank()) {
                return null;
            }
            try {
                return JSON.readTree(text);
            } catch (JsonProcessingException x) {
                throw problem(
                        file,
                        line,
                        0,
                        "column \"" + e.source() + "\" (mapped onto " + e.target() + " as JSON) is not JSON: "
                                + x.getOriginalMessage());
            }
        }

        @Override
        public void close() throws IOException {
            parser.close();
        }
    }

    /** The JSON objects of a JSON lines file, one per line. */
    private static final class RecordLines implements Lines {
        private final Path file;
        private final SourceLines lines;
        private final CaseMap map;

        RecordLines(Path file, InputStream in, CaseMap map) {
            this.file = file;
            this.lines = new SourceLines(in, DatasetLimits.MAX_CASE_BYTES);
            this.map = map;
        }

        @Override
        public byte[] next() throws IOException {
            try {
                if (!lines.next()) {
                    return null;
                }
            } catch (SourceLines.LineTooLongException e) {
                throw new RecordProblem(DatasetUploader.tooLong(file, e.line));
            }
            if (lines.lineIsBlank()) {
                return BLANK;
            }
            long line = lines.lineNumber();
            JsonNode record;
            try (JsonParser p = JSON.createParser(lines.lineBytes(), 0, lines.lineLength())) {
                record = JSON.readTree(p);
                if (p.nextToken() != null) {
                    throw problem(file, line, 0, "content after the record; one record per line");
                }
            } catch (JsonProcessingException e) {
                throw problem(file, line, 0, "not JSON: " + e.getOriginalMessage());
            }
            if (record == null || !record.isObject()) {
                throw problem(file, line, 0, "the record is not a JSON object");
            }
            JsonNode id = record.get(map.idSource());
            String named = id != null && id.isValueNode() ? "record \"" + id.asText() + "\": " : "";
            return caseLine(map, e -> {
                JsonNode v = record.get(e.source());
                if (v == null) {
                    throw problem(
                            file,
                            line,
                            0,
                            named + "no field \"" + e.source() + "\" (mapped onto " + e.target()
                                    + "); every record needs every mapped field");
                }
                if (e.json() && v.isTextual()) {
                    try {
                        return JSON.readTree(v.asText());
                    } catch (JsonProcessingException x) {
                        throw problem(
                                file,
                                line,
                                0,
                                named + "field \"" + e.source() + "\" (mapped onto " + e.target()
                                        + " as JSON) is not JSON: " + x.getOriginalMessage());
                    }
                }
                return v;
            });
        }

        @Override
        public void close() throws IOException {
            lines.close();
        }
    }
}
