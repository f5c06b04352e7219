package dev.vigilo.dataset;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.base.ParserBase;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import dev.vigilo.config.ParserLimits;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Validates one JSONL case line and extracts its {@link CaseFields}, streaming over the bytes (the opaque
 * {@code input}, {@code expected} and {@code metadata} values are skipped, never materialized).
 *
 * <p>A case is one JSON object with a string {@code id} (non-empty), any JSON {@code input}, and optionally
 * {@code expected} (any JSON), {@code group} (string), {@code tags} (array of strings) and {@code metadata}
 * (object). Other keys, repeated keys and content after the object are errors; keys inside the opaque values are
 * not checked.
 *
 * <p>Besides one line at a time ({@link #parse}), a whole buffer of lines can be validated through one JSON parser
 * ({@link #lines}), which saves creating a parser per line; a line that reader cannot judge on its own is left to
 * {@link #parse}, so both accept exactly the same lines. Not thread-safe (it reuses a decoder).
 */
final class CaseLineParser {
    static final Set<String> KNOWN_FIELDS = Set.of("id", "input", "expected", "group", "tags", "metadata");

    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

    private final int maxLineBytes;
    private final JsonFactory factory;
    /** For buffers of many lines: no document length limit (each line is bounded by the reader). */
    private final JsonFactory bufferFactory;

    private final CharsetDecoder utf8 = StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    private CharBuffer scratch = CharBuffer.allocate(1 << 12);

    CaseLineParser(int maxLineBytes) {
        this.maxLineBytes = maxLineBytes;
        // Duplicate top-level keys are caught below (only known keys are allowed); values stay opaque.
        this.factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxStringLength(maxLineBytes)
                        .maxDocumentLength(maxLineBytes + 1L)
                        .build())
                .build();
        this.bufferFactory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxStringLength(maxLineBytes)
                        .build())
                .build();
    }

    /**
     * Parses {@code bytes[0, length)}.
     *
     * @throws CaseSyntaxException with a 1-based column when the line is not valid UTF-8, not JSON, or not a case
     */
    CaseFields parse(byte[] bytes, int length) throws CaseSyntaxException {
        return parse(bytes, 0, length);
    }

    /**
     * Parses the line {@code bytes[offset, offset + length)}; columns count from {@code offset}.
     *
     * @throws CaseSyntaxException with a 1-based column when the line is not valid UTF-8, not JSON, or not a case
     */
    CaseFields parse(byte[] bytes, int offset, int length) throws CaseSyntaxException {
        checkUtf8(bytes, offset, length);
        try (JsonParser p = factory.createParser(bytes, offset, length)) {
            try {
                FullCase fields = new FullCase(true);
                readCase(p, p.nextToken(), fields);
                JsonToken trailing = p.nextToken();
                if (trailing != null) {
                    throw new CaseSyntaxException(
                            column(p.currentTokenLocation()),
                            "unexpected " + describe(trailing) + " after the case object (one case per line)");
                }
                return new CaseFields(fields.id, fields.group, fields.tags);
            } catch (StreamConstraintsException e) {
                // Jackson names its own classes and no place; the parser stands one past the byte that went over.
                JsonLocation at = p.currentLocation();
                throw new CaseSyntaxException(
                        at == null ? 1 : (int) Math.max(1, at.getColumnNr() - 1),
                        "invalid JSON: "
                                + ParserLimits.describe(
                                        e, StreamReadConstraints.defaults(), "a value longer than a case allows"));
            }
        } catch (JsonParseException e) {
            throw new CaseSyntaxException(column(e.getLocation()), "invalid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            // Parsing a byte array does no I/O; any other IOException is a parse failure too.
            throw new CaseSyntaxException(1, "invalid JSON: " + e.getMessage());
        }
    }

    /** The longest line (in bytes) {@link #parse} accepts. */
    int maxLineBytes() {
        return maxLineBytes;
    }

    /**
     * A parser over {@code bytes[from, end)} that reads one root value after another (a buffer of lines), with the
     * same limits as {@link #parse} except the document length, which the caller bounds line by line.
     */
    JsonParser bufferParser(byte[] bytes, int from, int end) throws IOException {
        return bufferFactory.createParser(bytes, from, end - from);
    }

    /**
     * Reads the case object whose {@code START_OBJECT} {@code p} is at, up to its {@code END_OBJECT}, checking every
     * rule of the case shape as {@link #parse} does, without error columns: for a caller that only needs to know
     * whether the case is valid (and parses the line with {@link #parse} when it is not). UTF-8 validity and what
     * surrounds the object are the caller's to check ({@link #checkUtf8}).
     */
    static CaseFields readCaseFields(JsonParser p) throws IOException, CaseSyntaxException {
        FullCase fields = new FullCase(false);
        readCase(p, p.currentToken(), fields);
        return new CaseFields(fields.id, fields.group, fields.tags);
    }

    /**
     * Reads only the {@code id} of a line that {@link #parse} already accepted, stopping as soon as it is found
     * (usually the first field). Used by the store pass, whose input the validation pass checked and whose source
     * hash is compared at the end, so a line that changed in between fails the upload anyway.
     *
     * @throws CaseSyntaxException when no string id is found
     */
    String idOf(byte[] bytes, int length) throws CaseSyntaxException {
        return idOf(bytes, 0, length);
    }

    /** {@link #idOf(byte[], int)} of the line {@code bytes[offset, offset + length)}. */
    String idOf(byte[] bytes, int offset, int length) throws CaseSyntaxException {
        try (JsonParser p = factory.createParser(bytes, offset, length)) {
            if (p.nextToken() == JsonToken.START_OBJECT) {
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    boolean isId = "id".equals(p.currentName());
                    JsonToken value = p.nextToken();
                    if (isId && value == JsonToken.VALUE_STRING) {
                        return p.getText();
                    }
                    p.skipChildren();
                }
            }
        } catch (IOException e) {
            throw new CaseSyntaxException(1, "invalid JSON: " + e.getMessage());
        }
        throw new CaseSyntaxException(1, "the case has no string \"id\"");
    }

    /**
     * Where the id of a line starts when the line begins exactly with {@code {"id":"} and the id is plain: printable
     * ASCII without quotes or backslashes, so its bytes are the id itself, already in its JSON-quoted form. Returns
     * the id's length in bytes (at least 1), or -1 when the line is not of that shape (then use {@link #idOf}).
     * Meant for lines the validation pass accepted, where the first field's value is then necessarily that id.
     */
    static int plainLeadingIdLength(byte[] bytes, int offset, int length) {
        if (length < LEADING_ID.length + 2) {
            return -1;
        }
        for (int i = 0; i < LEADING_ID.length; i++) {
            if (bytes[offset + i] != LEADING_ID[i]) {
                return -1;
            }
        }
        int start = offset + LEADING_ID.length;
        int n = plainAsciiRun(bytes, start, offset + length);
        return n > 0 && start + n < offset + length && bytes[start + n] == '"' ? n : -1;
    }

    /** The offset of the id in a line accepted by {@link #plainLeadingIdLength}. */
    static final int LEADING_ID_OFFSET = 7;

    private static final byte[] LEADING_ID = "{\"id\":\"".getBytes(StandardCharsets.US_ASCII);

    /** How many bytes from {@code from} (before {@code to}) are printable ASCII other than a quote or a backslash. */
    private static int plainAsciiRun(byte[] bytes, int from, int to) {
        int i = from;
        while (i < to) {
            byte b = bytes[i];
            if (b < 0x20 || b > 0x7E || b == '"' || b == '\\') {
                break;
            }
            i++;
        }
        return i - from;
    }

    /**
     * Validates the lines of {@code bytes[0, end)} through one JSON parser. The caller hands it the lines in order
     * ({@link Lines#judge}); a line it cannot judge alone (any error, content that is not exactly one object inside
     * the line, a byte-order mark in the middle) is reported as unjudged, and the caller parses that line with
     * {@link #parse}, which gives the outcome and the message of a line parsed by itself.
     */
    Lines lines(byte[] bytes, int end) {
        return new Lines(bytes, end);
    }

    /** One buffer's lines read through one parser; see {@link #lines}. Not thread-safe. */
    final class Lines implements AutoCloseable {
        private final byte[] bytes;
        private final int end;
        private final boolean ascii;
        private final LeanCase fields;
        private JsonParser parser;
        private int base;

        private Lines(byte[] bytes, int end) {
            this.bytes = bytes;
            this.end = end;
            this.ascii = isAscii(bytes, 0, end);
            this.fields = new LeanCase(bytes);
        }

        /**
         * Validates the line {@code [start, lineEnd)} (without its line ending). Lines must come in order, and
         * the lines skipped since the previous call must be blank. On true the line is a valid case and
         * {@link #idStart()}/{@link #idLength()} or {@link #idText()} give its id; on false the line was not judged
         * (parse it alone).
         */
        boolean judge(int start, int lineEnd) {
            fields.reset();
            try {
                if (!ascii) {
                    checkUtf8(bytes, start, lineEnd - start);
                }
                if (parser == null) {
                    parser = bufferFactory.createParser(bytes, start, end - start);
                    base = start;
                    if (!(parser instanceof ParserBase)) {
                        return unjudged();
                    }
                }
                // Lines before this one were blank or ended in whitespace, so the parser's next token is this
                // line's first: it must be the object's opening brace, inside the line.
                JsonToken first = parser.nextToken();
                int open = tokenStart();
                if (first != JsonToken.START_OBJECT || open < start || open >= lineEnd || bytes[open] != '{') {
                    return unjudged();
                }
                fields.base = base;
                readCase(parser, first, fields);
                // The closing brace, inside the line, and nothing after it but whitespace.
                int close = tokenStart();
                if (close < open || close >= lineEnd || bytes[close] != '}' || !whitespace(close + 1, lineEnd)) {
                    return unjudged();
                }
                return true;
            } catch (CaseSyntaxException | IOException e) {
                return unjudged();
            }
        }

        private boolean whitespace(int from, int to) {
            for (int i = from; i < to; i++) {
                byte b = bytes[i];
                if (b != ' ' && b != '\t' && b != '\r') {
                    return false;
                }
            }
            return true;
        }

        /** Where the plain id of the judged line starts in the buffer, or -1 when {@link #idText()} holds it. */
        int idStart() {
            return fields.idStart;
        }

        /** The plain id's length in bytes. */
        int idLength() {
            return fields.idLength;
        }

        /** The judged line's id when it is not plain ASCII (decoded), else null. */
        String idText() {
            return fields.idText;
        }

        private int tokenStart() {
            return CaseLineParser.tokenStart(parser, base);
        }

        private boolean unjudged() {
            close();
            return false;
        }

        @Override
        public void close() {
            if (parser != null) {
                try {
                    parser.close();
                } catch (IOException e) {
                    // closing a parser over a byte array does no I/O
                }
                parser = null;
            }
        }
    }

    /**
     * Reads one case object whose first token is {@code first}, checking every rule of the case shape, up to its
     * {@code END_OBJECT}. {@code fields} keeps what it needs; a lean read computes no error columns (its errors are
     * only a signal to parse the line alone).
     */
    private static void readCase(JsonParser p, JsonToken first, CaseSink fields)
            throws IOException, CaseSyntaxException {
        boolean columns = fields.columns();
        if (first != JsonToken.START_OBJECT) {
            throw new CaseSyntaxException(
                    columns ? column(p.currentTokenLocation()) : 0,
                    "a case must be a JSON object, found " + describe(first));
        }
        boolean sawId = false;
        boolean sawInput = false;
        int seen = 0;
        JsonToken t;
        while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            int fieldColumn = columns ? column(p.currentTokenLocation()) : 0;
            int bit = fieldBit(field);
            if ((seen & bit) != 0) {
                throw new CaseSyntaxException(fieldColumn, "duplicate field \"" + field + "\"");
            }
            seen |= bit;
            JsonToken value = p.nextToken();
            switch (field) {
                case "id" -> {
                    if (value != JsonToken.VALUE_STRING) {
                        throw new CaseSyntaxException(fieldColumn, "\"id\" must be a string, found " + describe(value));
                    }
                    if (p.getTextLength() == 0) {
                        throw new CaseSyntaxException(fieldColumn, "\"id\" must not be empty");
                    }
                    fields.id(p);
                    sawId = true;
                }
                case "input" -> {
                    sawInput = true;
                    p.skipChildren();
                }
                case "expected" -> p.skipChildren();
                case "group" -> {
                    if (value != JsonToken.VALUE_STRING) {
                        throw new CaseSyntaxException(
                                fieldColumn, "\"group\" must be a string, found " + describe(value));
                    }
                    fields.group(p);
                }
                case "tags" -> {
                    if (value != JsonToken.START_ARRAY) {
                        throw new CaseSyntaxException(
                                fieldColumn, "\"tags\" must be an array of strings, found " + describe(value));
                    }
                    JsonToken tag;
                    while ((tag = p.nextToken()) != JsonToken.END_ARRAY) {
                        if (tag != JsonToken.VALUE_STRING) {
                            throw new CaseSyntaxException(
                                    columns ? column(p.currentTokenLocation()) : 0,
                                    "\"tags\" must contain only strings, found " + describe(tag));
                        }
                        fields.tag(p);
                    }
                }
                case "metadata" -> {
                    if (value != JsonToken.START_OBJECT) {
                        throw new CaseSyntaxException(
                                fieldColumn, "\"metadata\" must be an object, found " + describe(value));
                    }
                    p.skipChildren();
                }
                default ->
                    throw new CaseSyntaxException(
                            fieldColumn,
                            "unknown field \"" + field + "\" (a case has id, input, expected, group, tags, metadata)");
            }
        }
        if (t != JsonToken.END_OBJECT) {
            throw new CaseSyntaxException(columns ? column(p.currentTokenLocation()) : 0, "malformed object");
        }
        if (!sawId) {
            throw new CaseSyntaxException(1, "the case has no \"id\" (a non-empty string is required)");
        }
        if (!sawInput) {
            throw new CaseSyntaxException(1, "case \"" + fields.idForMessage() + "\" has no \"input\"");
        }
    }

    /**
     * Where the current token starts in the parser's array, for a byte-array parser created at {@code base}:
     * {@link ParserBase#getTokenCharacterOffset()} counts from there and points one byte past the token's first
     * byte. Callers check the byte found there ({@code {}, {@code }} or a quote), so a different reading of the
     * offset only sends lines to the slower path.
     */
    static int tokenStart(JsonParser p, int base) {
        return base + (int) ((ParserBase) p).getTokenCharacterOffset() - 1;
    }

    /** What a read of one case keeps. */
    private interface CaseSink {
        /** True to compute error columns (a read without them only needs to know whether the case is valid). */
        boolean columns();

        /** The parser is at the id's (non-empty) string. */
        void id(JsonParser p) throws IOException;

        /** The parser is at the group's string. */
        void group(JsonParser p) throws IOException;

        /** The parser is at one tag's string. */
        void tag(JsonParser p) throws IOException;

        String idForMessage();
    }

    /** Keeps every field, for {@link #parse} (with error columns) and {@link #readCaseFields} (without). */
    private static final class FullCase implements CaseSink {
        private final boolean columns;
        String id;
        Optional<String> group = Optional.empty();
        List<String> tags = List.of();

        FullCase(boolean columns) {
            this.columns = columns;
        }

        @Override
        public boolean columns() {
            return columns;
        }

        @Override
        public void id(JsonParser p) throws IOException {
            id = p.getText();
        }

        @Override
        public void group(JsonParser p) throws IOException {
            group = Optional.of(p.getText());
        }

        @Override
        public void tag(JsonParser p) throws IOException {
            if (tags.isEmpty()) {
                tags = new ArrayList<>();
            }
            tags.add(p.getText());
        }

        @Override
        public String idForMessage() {
            return id;
        }
    }

    /**
     * Keeps only the id, as a position in the buffer when its bytes are plain ASCII (no string is made), else
     * decoded. For {@link Lines}, whose parsers are byte-array parsers exposing token offsets.
     */
    private static final class LeanCase implements CaseSink {
        private final byte[] bytes;
        int base;
        int idStart;
        int idLength;
        String idText;

        LeanCase(byte[] bytes) {
            this.bytes = bytes;
        }

        void reset() {
            idStart = -1;
            idLength = 0;
            idText = null;
        }

        @Override
        public boolean columns() {
            return false;
        }

        @Override
        public void id(JsonParser p) throws IOException {
            // The token starts at the opening quote; a plain run as long as the decoded text, then the closing
            // quote, means the raw bytes are the id (no escapes).
            int quote = tokenStart(p, base);
            int n = p.getTextLength();
            if (quote >= 0
                    && quote + n + 1 < bytes.length
                    && bytes[quote] == '"'
                    && plainAsciiRun(bytes, quote + 1, quote + 1 + n) == n
                    && bytes[quote + 1 + n] == '"') {
                idStart = quote + 1;
                idLength = n;
            } else {
                idText = p.getText();
            }
        }

        @Override
        public void group(JsonParser p) {}

        @Override
        public void tag(JsonParser p) {}

        @Override
        public String idForMessage() {
            return "";
        }
    }

    private static int fieldBit(String field) {
        return switch (field) {
            case "id" -> 1;
            case "input" -> 2;
            case "expected" -> 4;
            case "group" -> 8;
            case "tags" -> 16;
            case "metadata" -> 32;
            default -> 0;
        };
    }

    /** True when every byte of {@code bytes[from, to)} is ASCII; eight bytes at a time. */
    static boolean isAscii(byte[] bytes, int from, int to) {
        int i = from;
        while (i + 8 <= to && ((long) LONGS.get(bytes, i) & 0x8080808080808080L) == 0) {
            i += 8;
        }
        while (i < to && bytes[i] >= 0) {
            i++;
        }
        return i == to;
    }

    /** Checks that {@code bytes[offset, offset + length)} is valid UTF-8, as {@link #parse} does first. */
    void checkUtf8(byte[] bytes, int offset, int length) throws CaseSyntaxException {
        // ASCII is the common case and needs no decoder.
        if (isAscii(bytes, offset, offset + length)) {
            return;
        }
        utf8.reset();
        ByteBuffer in = ByteBuffer.wrap(bytes, offset, length);
        while (true) {
            scratch.clear();
            CoderResult r = utf8.decode(in, scratch, true);
            if (r.isError()) {
                int at = in.position() - offset;
                throw new CaseSyntaxException(
                        at + 1,
                        "bytes are not valid UTF-8 (byte 0x" + Integer.toHexString(bytes[in.position()] & 0xFF)
                                + " at byte offset " + at + " of the line)");
            }
            if (r.isUnderflow()) {
                break;
            }
        }
        scratch.clear();
        CoderResult r = utf8.flush(scratch);
        if (r.isError()) {
            throw new CaseSyntaxException(length, "bytes are not valid UTF-8 (truncated sequence at end of line)");
        }
    }

    private static int column(JsonLocation location) {
        if (location == null) {
            return 1;
        }
        long col = location.getColumnNr();
        if (col <= 0) {
            col = location.getByteOffset() + 1;
        }
        return (int) Math.max(1, col);
    }

    private static String describe(JsonToken t) {
        if (t == null) {
            return "end of line";
        }
        return switch (t) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            default -> t.asString() == null ? t.name() : "'" + t.asString() + "'";
        };
    }

    /** The line is not a valid case; {@code column} is 1-based within the line. */
    static final class CaseSyntaxException extends Exception {
        private static final long serialVersionUID = 1L;
        final int column;

        CaseSyntaxException(int column, String message) {
            super(message);
            this.column = column;
        }
    }
}
