package dev.vigilo.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.json.StrictJson;
import java.io.IOException;
import java.util.Optional;

/** The module's one JSON mapper: strict (duplicate keys and trailing content are errors), bounded nesting. */
final class Json {
    static final ObjectMapper MAPPER = StrictJson.newMapper();

    private Json() {}

    /** Exactly one JSON value, or empty when {@code bytes} are not that. */
    static Optional<JsonNode> parse(byte[] bytes) {
        try {
            JsonNode n = MAPPER.readTree(bytes);
            return n == null || n.isMissingNode() ? Optional.empty() : Optional.of(n);
        } catch (IOException e) {
            return Optional.empty();
        }
    }
}
