package dev.vigilo.llm;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Optional;

/** The module's one JSON mapper: strict (duplicate keys and trailing content are errors), bounded nesting. */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
                    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxNestingDepth(256)
                            .maxStringLength(64 << 20)
                            .build())
                    .build())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);

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
