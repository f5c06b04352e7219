package dev.vigilo.web;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.vigilo.common.json.StrictJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * How the dashboard reads JSON that another program wrote or that was persisted (dataset cases, transcripts and
 * session logs, tool arguments, datagen items, other modules' documents): common's strict reading ({@link StrictJson}:
 * a key given twice is an error, not a silent choice of one value). What the dashboard writes goes through its one
 * output mapper, {@link Dashboard#JSON}.
 */
final class StoredJson {
    private static final ObjectMapper STRICT = StrictJson.newMapper();

    private StoredJson() {}

    static JsonNode read(String json) throws JsonProcessingException {
        return STRICT.readTree(json);
    }

    static JsonNode read(byte[] json) throws IOException {
        return STRICT.readTree(json);
    }

    /**
     * A dataset case, read strictly. The upload checks a case's id, group and tags, not every key inside it, so a
     * case stored as given may repeat a key (or nest deeper than strict reading allows): such a case is shown as its
     * text (a JSON string) instead of as one reading of it.
     */
    static JsonNode datasetCase(byte[] caseJson) {
        try {
            return STRICT.readTree(caseJson);
        } catch (IOException e) {
            return TextNode.valueOf(new String(caseJson, StandardCharsets.UTF_8));
        }
    }

    /** A case's {@code input}, or the whole case when it is shown as its text ({@link #datasetCase}). */
    static JsonNode input(JsonNode datasetCase) {
        return datasetCase.isTextual() ? datasetCase : datasetCase.path("input");
    }
}
