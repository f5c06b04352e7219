package dev.vigilo.dataset;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
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
 * not checked. Not thread-safe (it reuses a
 * decoder).
 */
final class CaseLineParser {
    static final Set<String> KNOWN_FIELDS = Set.of("id", "input", "expected", "group", "tags", "metadata");

    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

    private final JsonFactory factory;
    private final CharsetDecoder utf8 = StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    private CharBuffer scratch = CharBuffer.allocate(1 << 12);

    CaseLineParser(int maxLineBytes) {
        // Duplicate top-level keys are caught below (only known keys are allowed); values stay opaque.
        this.factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxStringLength(maxLineBytes)
                        .maxDocumentLength(maxLineBytes + 1L)
                        .build())
                .build();
    }

    /**
     * Parses {@code bytes[0, length)}.
     *
     * @throws CaseSyntaxException with a 1-based column when the line is not valid UTF-8, not JSON, or not a case
     */
    CaseFields parse(byte[] bytes, int length) throws CaseSyntaxException {
        checkUtf8(bytes, length);
        try (JsonParser p = factory.createParser(bytes, 0, length)) {
            JsonToken first = p.nextToken();
            if (first != JsonToken.START_OBJECT) {
                throw new CaseSyntaxException(
                        column(p.currentTokenLocation()), "a case must be a JSON object, found " + describe(first));
            }
            String id = null;
            boolean sawInput = false;
            Optional<String> group = Optional.empty();
            List<String> tags = List.of();
            int seen = 0;
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                int fieldColumn = column(p.currentTokenLocation());
                int bit = fieldBit(field);
                if ((seen & bit) != 0) {
                    throw new CaseSyntaxException(fieldColumn, "duplicate field \"" + field + "\"");
                }
                seen |= bit;
                JsonToken value = p.nextToken();
                switch (field) {
                    case "id" -> {
                        if (value != JsonToken.VALUE_STRING) {
                            throw new CaseSyntaxException(
                                    fieldColumn, "\"id\" must be a string, found " + describe(value));
                        }
                        id = p.getText();
                        if (id.isEmpty()) {
                            throw new CaseSyntaxException(fieldColumn, "\"id\" must not be empty");
                        }
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
                        group = Optional.of(p.getText());
                    }
                    case "tags" -> tags = readTags(p, fieldColumn, value);
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
                                "unknown field \"" + field
                                        + "\" (a case has id, input, expected, group, tags, metadata)");
                }
            }
            if (t != JsonToken.END_OBJECT) {
                throw new CaseSyntaxException(column(p.currentTokenLocation()), "malformed object");
            }
            if (id == null) {
                throw new CaseSyntaxException(1, "the case has no \"id\" (a non-empty string is required)");
            }
            if (!sawInput) {
                throw new CaseSyntaxException(1, "case \"" + id + "\" has no \"input\"");
            }
            JsonToken trailing = p.nextToken();
            if (trailing != null) {
                throw new CaseSyntaxException(
                        column(p.currentTokenLocation()),
                        "unexpected " + describe(trailing) + " after the case object (one case per line)");
            }
            return new CaseFields(id, group, tags);
        } catch (JsonParseException e) {
            throw new CaseSyntaxException(column(e.getLocation()), "invalid JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            // Parsing a byte array does no I/O; any other IOException is a parse failure too.
            throw new CaseSyntaxException(1, "invalid JSON: " + e.getMessage());
        }
    }

    /**
     * Reads only the {@code id} of a line that {@link #parse} already accepted, stopping as soon as it is found
     * (usually the first field). Used by the store pass, whose input the validation pass checked and whose source
     * hash is compared at the end, so a line that changed in between fails the upload anyway.
     *
     * @throws CaseSyntaxException when no string id is found
     */
    String idOf(byte[] bytes, int length) throws CaseSyntaxException {
        try (JsonParser p = factory.createParser(bytes, 0, length)) {
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

    private static List<String> readTags(JsonParser p, int fieldColumn, JsonToken value)
            throws IOException, CaseSyntaxException {
        if (value != JsonToken.START_ARRAY) {
            throw new CaseSyntaxException(
                    fieldColumn, "\"tags\" must be an array of strings, found " + describe(value));
        }
        List<String> tags = new ArrayList<>();
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.VALUE_STRING) {
                throw new CaseSyntaxException(
                        column(p.currentTokenLocation()), "\"tags\" must contain only strings, found " + describe(t));
            }
            tags.add(p.getText());
        }
        return tags;
    }

    private void checkUtf8(byte[] bytes, int length) throws CaseSyntaxException {
        // ASCII is the common case and needs no decoder; test eight bytes at a time.
        int i = 0;
        while (i + 8 <= length && ((long) LONGS.get(bytes, i) & 0x8080808080808080L) == 0) {
            i += 8;
        }
        while (i < length && bytes[i] >= 0) {
            i++;
        }
        if (i == length) {
            return;
        }
        utf8.reset();
        ByteBuffer in = ByteBuffer.wrap(bytes, 0, length);
        while (true) {
            scratch.clear();
            CoderResult r = utf8.decode(in, scratch, true);
            if (r.isError()) {
                throw new CaseSyntaxException(
                        in.position() + 1,
                        "bytes are not valid UTF-8 (byte 0x" + Integer.toHexString(bytes[in.position()] & 0xFF)
                                + " at byte offset " + in.position() + " of the line)");
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
