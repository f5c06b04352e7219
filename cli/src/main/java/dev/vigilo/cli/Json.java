package dev.vigilo.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetOrigin;
import java.io.IOException;
import java.io.Writer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The CLI's JSON, one way: the one mapper for what it prints (the {@code --json} shapes; key names are documented in
 * docs/cli.md), and common's strict reading ({@link StrictJson}: a key given twice is an error) for what it reads that
 * another program wrote or that was persisted.
 */
final class Json {
    private static final ObjectMapper MAPPER = new ObjectMapper().disable(SerializationFeature.INDENT_OUTPUT);
    private static final ObjectMapper STRICT = StrictJson.newMapper();

    private Json() {}

    static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode CLI output", e);
        }
    }

    /** A generator for output streamed as it is produced (the caller closes it; {@code out} stays open). */
    static JsonGenerator generator(Writer out) throws IOException {
        return MAPPER.getFactory().createGenerator(out).disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
    }

    /** One JSON document another program wrote or that was persisted, read strictly. */
    static JsonNode read(String json) throws JsonProcessingException {
        return STRICT.readTree(json);
    }

    /** A dataset's origin: the datagen experiment it was exported from. */
    static Map<String, Object> origin(DatasetOrigin o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("kind", "datagen");
        m.put("durable_root", o.durableRoot());
        m.put("pipeline", o.pipeline());
        m.put("experiment", o.experiment());
        m.put("log_version", o.logVersion());
        m.put("items", o.items());
        m.put("map", o.map().toString());
        return m;
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
