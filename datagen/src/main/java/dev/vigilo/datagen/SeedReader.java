package dev.vigilo.datagen;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.input.InputFiles;
import dev.vigilo.common.input.TextEncoding;
import dev.vigilo.config.ParserLimits;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads and validates a pipeline's seed input completely before the run writes anything: one JSON
 * object per line of UTF-8 (blank lines skipped, a UTF-8 byte order mark before the first line too),
 * each with an id, ids unique. The first problem is reported as {@code FILE:LINE:COLUMN} (1-based; a
 * byte that is not UTF-8 at its byte column, with its offset in the line, as {@code dataset upload}
 * reports it).
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
        // Lines are read as bytes, so a byte that is not UTF-8 is reported where it is (as dataset upload does)
        // rather than as a decoder's "Input length = 1".
        try (InputStream in = Files.newInputStream(input)) {
            byte[] buffer = new byte[64 * 1024];
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            int n = 0;
            int read;
            while ((read = in.read(buffer)) > 0) {
                int start = 0;
                for (int i = 0; i < read; i++) {
                    if (buffer[i] == '\n') {
                        line.write(buffer, start, i - start);
                        seed(file, ++n, line.toByteArray(), idField, out, lineOfId);
                        line.reset();
                        start = i + 1;
                    }
                }
                line.write(buffer, start, read - start);
            }
            if (line.size() > 0) {
                seed(file, ++n, line.toByteArray(), idField, out, lineOfId);
            }
        } catch (IOException e) {
            throw new PipelineDefinitionException(file, 0, 0, "cannot read seed input: " + e.getMessage());
        }
        return out;
    }

    /** Adds the seed of line {@code n} (its bytes without the line feed), if it is not blank. */
    private static void seed(
            String file, int n, byte[] bytes, String idField, List<Seed> out, Map<String, Integer> lineOfId) {
        int from = 0;
        if (n == 1) {
            TextEncoding.notUtf8(bytes, bytes.length).ifPresent(problem -> {
                throw new PipelineDefinitionException(file, 1, 1, problem);
            });
            from = TextEncoding.utf8MarkLength(bytes, bytes.length);
        }
        int to = bytes.length > from && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
        TextEncoding.Malformed bad =
                TextEncoding.firstMalformed(bytes, from, to).orElse(null);
        if (bad != null) {
            throw new PipelineDefinitionException(
                    file, n, (int) (from + bad.column()), bad.describe() + "; save the seed input as UTF-8");
        }
        String line = new String(bytes, from, to - from, StandardCharsets.UTF_8);
        if (line.isBlank()) {
            return;
        }
        ObjectNode fields = parseObject(file, n, line);
        String id = idField == null ? "item-" + n : idOf(file, n, fields, idField);
        Integer first = lineOfId.putIfAbsent(id, n);
        if (first != null) {
            throw new PipelineDefinitionException(
                    file, n, 1, "duplicate item id '" + id + "' (first on line " + first + ")");
        }
        out.add(new Seed(id, fields));
    }

    private static ObjectNode parseObject(String file, int n, String line) {
        JsonNode node;
        try (JsonParser parser = Json.MAPPER.createParser(line)) {
            try {
                node = Json.MAPPER.readTree(parser);
            } catch (StreamConstraintsException e) {
                // Jackson's message names its own classes and no place: say what it means, and where.
                JsonLocation l = ParserLimits.lastRead(parser);
                throw new PipelineDefinitionException(
                        file,
                        n,
                        l == null ? 1 : l.getColumnNr(),
                        ParserLimits.describe(
                                        e, StreamReadConstraints.defaults(), "a value longer than this reader accepts")
                                + "; each line must be one JSON object of at most "
                                + StreamReadConstraints.defaults().getMaxNestingDepth() + " levels");
            }
        } catch (JsonProcessingException e) {
            JsonLocation l = e.getLocation();
            throw new PipelineDefinitionException(
                    file,
                    n,
                    l == null ? 1 : l.getColumnNr(),
                    "invalid JSON: " + e.getOriginalMessage() + "; each line must be one JSON object");
        } catch (IOException e) {
            throw new PipelineDefinitionException(file, n, 1, "cannot parse the line: " + e.getMessage());
        }
        if (!node.isObject()) {
            throw new PipelineDefinitionException(file, n, 1, "each line must be one JSON object");
        }
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
