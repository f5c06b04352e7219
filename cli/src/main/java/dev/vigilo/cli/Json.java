package dev.vigilo.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.vigilo.dataset.DatasetEntry;
import java.util.LinkedHashMap;
import java.util.Map;

/** The JSON shapes the CLI prints with {@code --json}; key names are documented in docs/cli.md. */
final class Json {
    private static final ObjectMapper MAPPER = new ObjectMapper().disable(SerializationFeature.INDENT_OUTPUT);

    private Json() {}

    static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode CLI output", e);
        }
    }

    static Map<String, Object> dataset(DatasetEntry e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("upload_id", e.uploadId().toString());
        m.put("name", e.name());
        m.put("case_count", e.caseCount());
        m.put("source_hash", e.sourceSha256().toHex());
        m.put("source_bytes", e.sourceBytes());
        m.put("membership_uuid", e.membershipUuid().toString());
        m.put("storage", e.storage().value());
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("key", e.indexRoot().key().value());
        root.put("length", e.indexRoot().length());
        root.put("sha256", e.indexRoot().sha256().toHex());
        m.put("index_root", root);
        m.put("index_levels", e.indexLevels());
        m.put("created_at", e.createdAt().toString());
        return m;
    }
}
