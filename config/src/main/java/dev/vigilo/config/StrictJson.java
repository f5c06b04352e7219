package dev.vigilo.config;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The JSON mapper for Vigilo's own persisted formats (receipts, settlement evidence, status and snapshot documents):
 * a key given twice in one object is a syntax error rather than silently the last value, so a damaged or hand-edited
 * record is refused instead of read as something it never said. Writing is Jackson's default.
 */
public final class StrictJson {
    private StrictJson() {}

    /**
     * A new strict mapper; keep it in a {@code static final} field of the class that reads one format (an
     * {@link ObjectMapper} is thread-safe once configured, and nothing may configure a shared one further).
     */
    public static ObjectMapper mapper() {
        return new ObjectMapper(JsonFactory.builder()
                        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                        .build())
                .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
    }
}
