package dev.vigilo.agent;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.json.StrictJson;
import java.io.IOException;
import java.io.UncheckedIOException;

/** The module's one JSON mapper: strict (duplicate keys and trailing content are errors), bounded nesting. */
final class Json {
    static final ObjectMapper MAPPER = StrictJson.newMapper();

    private Json() {}

    /** Parses one JSON value; throws {@link IOException} (with Jackson's message) when it is not exactly one. */
    static JsonNode parse(byte[] bytes) throws IOException {
        JsonNode n = MAPPER.readTree(bytes);
        if (n == null || n.isMissingNode()) {
            throw new IOException("no JSON value");
        }
        return n;
    }

    /** Parses one JSON value from text. */
    static JsonNode parse(String text) throws IOException {
        JsonNode n = MAPPER.readTree(text);
        if (n == null || n.isMissingNode()) {
            throw new IOException("no JSON value");
        }
        return n;
    }

    /** Compact JSON text of a node (keys in the node's order). */
    static String text(JsonNode n) {
        try {
            return MAPPER.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Compact JSON bytes of a node. */
    static byte[] bytes(JsonNode n) {
        try {
            return MAPPER.writeValueAsBytes(n);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The first line of a parser's message, without Jackson's source excerpt. */
    static String problem(IOException e) {
        String m = e.getMessage() == null ? e.toString() : e.getMessage();
        return m.lines().findFirst().orElse(m);
    }
}
