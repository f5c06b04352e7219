package dev.vigilo.datagen;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.input.InputFiles;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads and validates a pipeline's seed input completely before the run writes anything: one JSON
 * object per line (blank lines skipped), each with an id, ids unique. The first problem is reported
 * as {@code FILE:LINE:COLUMN} (1-based).
 */
final class SeedReader {
    /** One seed: its item id and its fields (the whole JSON object of its line). */
    record Seed(String id, ObjectNode fields) {}

    private SeedReader() {}

    /**
     * The seeds of {@code input} in file order.
     *
     * @param idField the field holding each seed's id (a non-empty string or an integer); null:
     *     the id is {@code item-<line>}
     * @throws PipelineDefinitionException the input is invalid or unreadable
     */
    static List<Seed> read(Path input, String idField) {
        List<Seed> out = new ArrayList<>();
        Map<String, Integer> lineOfId = new HashMap<>();
        String file = input.toString();
        // Checked before opening: a named pipe would block the open for ever.
        InputFiles.problem(input).ifPresent(problem -> {
            throw new PipelineDefinitionException(
                    file, 0, 0, "seed input " + problem + "; give the pipeline's input as a JSONL file");
        });
        try (BufferedReader r = Files.newBufferedReader(input, StandardCharsets.UTF_8)) {
            String line;
            int n = 0;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.isBlank()) continue;
                ObjectNode fields = parseObject(file, n, line);
                String id = idField == null ? "item-" + n : idOf(file, n, fields, idField);
                Integer first = lineOfId.putIfAbsent(id, n);
                if (first != null)
                    throw new PipelineDefinitionException(
                            file, n, 1, "duplicate item id '" + id + "' (first on line " + first + ")");
                out.add(new Seed(id, fields));
            }
        } catch (IOException e) {
            throw new PipelineDefinitionException(file, 0, 0, "cannot read seed input: " + e.getMessage());
        }
        return out;
    }

    private static ObjectNode parseObject(String file, int n, String line) {
        JsonNode node;
        try {
            node = Json.parse(line);
        } catch (JsonProcessingException e) {
            JsonLocation l = e.getLocation();
            throw new PipelineDefinitionException(
                    file,
                    n,
                    l == null ? 1 : l.getColumnNr(),
                    "invalid JSON: " + e.getOriginalMessage() + "; each line must be one JSON object");
        }
        if (!node.isObject()) throw new PipelineDefinitionException(file, n, 1, "each line must be one JSON object");
        return (ObjectNode) node;
    }

    private static String idOf(String file, int n, ObjectNode fields, String idField) {
        JsonNode v = fields.get(idField);
        if (v == null || !(v.isTextual() || v.isIntegralNumber()) || v.asText().isEmpty()) {
            throw new PipelineDefinitionException(
                    file, n, 1, "seed has no string or integer '" + idField + "' (the pipeline's id_field)");
        }
        return v.asText();
    }
}
