package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.input.InputFiles;
import dev.vigilo.common.input.TextEncoding;
import dev.vigilo.config.ConfigDocument;
import dev.vigilo.config.ConfigSyntaxException;
import dev.vigilo.config.KeyPath;
import dev.vigilo.config.Position;
import dev.vigilo.config.ReadOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Parses a pipeline YAML file (format in docs/datagen.md). Every error names the file, line and
 * column of the offending node and what to do. Unknown keys are errors (a typo must not silently
 * change behaviour).
 */
public final class PipelineParser {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}");
    private static final Set<String> TOP_KEYS = Set.of("name", "input", "id_field", "prices", "steps");
    private static final Set<String> COMMON = Set.of("name", "kind", "retries", "timeout_seconds", "concurrency");
    private static final Map<StepKind, Set<String>> KIND_KEYS = Map.of(
            StepKind.COMMAND, Set.of("command"),
            StepKind.HTTP, Set.of("url", "model", "prompt", "output_field"),
            StepKind.TEMPLATE, Set.of("template", "output_field"),
            StepKind.FILTER, Set.of("keep_if"),
            StepKind.EXPAND, Set.of("field", "as"),
            StepKind.LOOP, Set.of("body", "until", "max_iterations"),
            StepKind.CHAT, ChatParser.KEYS);

    private final String file;
    /** The document read, with the position of every node for messages. */
    private ConfigDocument document;
    /** The pipeline's {@code prices} by model; null when it gives none. */
    private Map<String, ChatSpec.Price> prices;
    /** Rate limit per chat url and the pointer of the step that set it: one endpoint, one limit. */
    private final Map<String, Map.Entry<ChatSpec.RateLimit, String>> limits = new HashMap<>();

    private PipelineParser(String file) {
        this.file = file;
    }

    /** Parses {@code path}; the input path in it is resolved against the file's directory. */
    public static PipelineSpec parse(Path path) {
        byte[] bytes;
        // Checked before opening: a named pipe would block the open for ever.
        InputFiles.problem(path).ifPresent(problem -> {
            throw new PipelineDefinitionException(path.toString(), 0, 0, problem + "; give the pipeline's YAML file");
        });
        try {
            bytes = Files.readAllBytes(path);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new PipelineDefinitionException(path.toString(), 0, 0, "no such file; check the path");
        } catch (IOException e) {
            throw new PipelineDefinitionException(
                    path.toString(), 0, 0, "cannot read pipeline file: " + e.getMessage());
        }
        TextEncoding.notUtf8(bytes, bytes.length).ifPresent(problem -> {
            throw new PipelineDefinitionException(path.toString(), 1, 1, problem);
        });
        TextEncoding.firstMalformed(bytes).ifPresent(bad -> {
            throw new PipelineDefinitionException(
                    path.toString(),
                    (int) bad.line(),
                    (int) bad.column(),
                    bad.describe() + "; save the pipeline as UTF-8");
        });
        return new PipelineParser(path.toString())
                .parse(
                        new String(bytes, StandardCharsets.UTF_8),
                        path.toAbsolutePath().getParent());
    }

    /** Parses YAML text; {@code baseDir} resolves a relative input path. */
    public static PipelineSpec parse(String fileName, String yaml, Path baseDir) {
        return new PipelineParser(fileName).parse(yaml, baseDir);
    }

    private PipelineSpec parse(String yaml, Path baseDir) {
        try {
            document = ConfigDocument.yaml(yaml, file, ReadOptions.lenient());
        } catch (ConfigSyntaxException e) {
            // One line: the YAML parser's problem at its 1-based line and column, without its multi-line context.
            throw new PipelineDefinitionException(
                    file,
                    e.position().map(p -> (int) p.line()).orElse(0),
                    e.position().map(p -> (int) p.column()).orElse(0),
                    "invalid YAML: " + e.problem() + (e.isLimit() ? "; flatten it" : "; fix the syntax"));
        }
        JsonNode root = document.root();
        if (root == null || !root.isObject()) {
            throw err("", "the pipeline must be a YAML mapping with 'input' and 'steps'");
        }
        checkKeys(root, "", TOP_KEYS);
        String name = text(root, "", "name", false);
        if (name == null) {
            String f = Path.of(file).getFileName().toString();
            name = f.replaceFirst("\\.ya?ml$", "");
        }
        if (!NAME.matcher(name).matches()) {
            throw err("/name", "pipeline name '" + name + "' is invalid: use letters, digits, '.', '_' or '-'");
        }
        String input = text(root, "", "input", true);
        String idField = text(root, "", "id_field", false);
        prices = new ChatParser(this).prices(root);
        JsonNode steps = root.get("steps");
        if (steps == null || !steps.isArray() || steps.isEmpty()) {
            throw err(steps == null ? "" : "/steps", "'steps' must be a non-empty list");
        }
        List<StepSpec> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < steps.size(); i++) {
            StepSpec s = step(steps.get(i), "/steps/" + i);
            if (!names.add(s.name())) {
                throw err("/steps/" + i + "/name", "duplicate step name '" + s.name() + "'; step names must be unique");
            }
            out.add(s);
        }
        return new PipelineSpec(
                name, baseDir == null ? Path.of(input) : baseDir.resolve(input).normalize(), idField, out);
    }

    private StepSpec step(JsonNode n, String ptr) {
        if (!n.isObject()) {
            throw err(ptr, "a step must be a mapping with 'name' and 'kind'");
        }
        String name = text(n, ptr, "name", true);
        String kindText = text(n, ptr, "kind", true);
        StepKind kind;
        try {
            kind = StepKind.valueOf(kindText.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw err(
                    ptr + "/kind",
                    "unknown step kind '" + kindText
                            + "'; use one of command, http, chat, template, filter, expand, loop");
        }
        Set<String> allowed = new HashSet<>(COMMON);
        allowed.addAll(KIND_KEYS.get(kind));
        checkKeys(n, ptr, allowed);
        int retries = integer(n, ptr, "retries", 0, 0, 100);
        Duration timeout = Duration.ofSeconds(integer(n, ptr, "timeout_seconds", 60, 1, 86_400));
        int concurrency = integer(n, ptr, "concurrency", 0, 0, 10_000);
        List<String> command = null;
        String url = null, model = null, template = null, output = null, listField = null, childField = null;
        Condition cond = null;
        StepSpec body = null;
        int maxIter = 0;
        ChatSpec chat = null;
        switch (kind) {
            case CHAT -> chat = new ChatParser(this).chat(n, ptr, name);
            case COMMAND -> {
                JsonNode c = n.get("command");
                if (c == null) {
                    throw err(ptr, "a command step needs 'command' (a list of arguments or a shell string)");
                }
                command = new ArrayList<>();
                if (c.isTextual()) {
                    command = List.of("sh", "-c", c.textValue());
                } else if (c.isArray() && !c.isEmpty()) {
                    for (int i = 0; i < c.size(); i++) {
                        if (!c.get(i).isTextual()) {
                            throw err(ptr + "/command/" + i, "command arguments must be strings");
                        }
                        command.add(c.get(i).textValue());
                    }
                } else {
                    throw err(ptr + "/command", "'command' must be a non-empty list of strings or a shell string");
                }
            }
            case HTTP -> {
                url = text(n, ptr, "url", true);
                model = text(n, ptr, "model", true);
                template = text(n, ptr, "prompt", true);
                output = text(n, ptr, "output_field", true);
            }
            case TEMPLATE -> {
                template = text(n, ptr, "template", true);
                output = text(n, ptr, "output_field", true);
            }
            case FILTER -> cond = condition(n, ptr, "keep_if");
            case EXPAND -> {
                listField = text(n, ptr, "field", true);
                childField = text(n, ptr, "as", false);
                if (childField == null) {
                    childField = "element";
                }
            }
            case LOOP -> {
                JsonNode b = n.get("body");
                if (b == null) {
                    throw err(ptr, "a loop step needs 'body' (one step mapping)");
                }
                body = step(b, ptr + "/body");
                if (body.kind() == StepKind.LOOP || body.kind() == StepKind.EXPAND || body.kind() == StepKind.FILTER) {
                    throw err(ptr + "/body/kind", "a loop body must be a command, http, chat or template step");
                }
                cond = condition(n, ptr, "until");
                maxIter = integer(n, ptr, "max_iterations", 0, 1, 10_000);
                if (!n.has("max_iterations")) {
                    throw err(ptr, "a loop step needs 'max_iterations'");
                }
            }
        }
        return new StepSpec(
                name,
                kind,
                command,
                url,
                model,
                template,
                output,
                cond,
                listField,
                childField,
                body,
                maxIter,
                retries,
                timeout,
                concurrency,
                chat);
    }

    /** The pipeline's prices (null: none given). */
    Map<String, ChatSpec.Price> prices() {
        return prices;
    }

    /** Records {@code url}'s rate limit set at {@code ptr}; an error if another step set a different one. */
    void rateLimit(String url, ChatSpec.RateLimit limit, String ptr) {
        Map.Entry<ChatSpec.RateLimit, String> earlier = limits.putIfAbsent(url, Map.entry(limit, ptr));
        if (earlier != null && !earlier.getKey().equals(limit)) {
            throw err(
                    ptr,
                    "rate_limit differs from the one set for the same url at " + where(earlier.getValue())
                            + "; an endpoint has one limit, give every step that calls it the same rate_limit");
        }
    }

    /** {@code FILE:LINE:COLUMN} of the node at {@code ptr}. */
    ChatSpec.SourcePosition position(String ptr) {
        Optional<Position> l = location(ptr);
        return new ChatSpec.SourcePosition(
                file,
                l.map(p -> (int) p.line()).orElse(1),
                l.map(p -> (int) p.column()).orElse(1));
    }

    private String where(String ptr) {
        ChatSpec.SourcePosition p = position(ptr);
        return p.line() + ":" + p.column();
    }

    private Condition condition(JsonNode n, String ptr, String key) {
        JsonNode c = n.get(key);
        if (c == null || !c.isObject()) {
            throw err(c == null ? ptr : ptr + "/" + key, "'" + key + "' must be a mapping {field: F[, equals: V]}");
        }
        checkKeys(c, ptr + "/" + key, Set.of("field", "equals"));
        return new Condition(text(c, ptr + "/" + key, "field", true), c.get("equals"));
    }

    void checkKeys(JsonNode n, String ptr, Set<String> allowed) {
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!allowed.contains(k)) {
                throw err(ptr + "/" + k, "unknown key '" + k + "'; allowed here: " + new java.util.TreeSet<>(allowed));
            }
        }
    }

    String text(JsonNode n, String ptr, String key, boolean required) {
        JsonNode v = n.get(key);
        if (v == null || v.isNull()) {
            if (required) {
                throw err(ptr, "missing required key '" + key + "'");
            }
            return null;
        }
        if (!v.isTextual() || v.textValue().isEmpty()) {
            throw err(ptr + "/" + key, "'" + key + "' must be a non-empty string");
        }
        return v.textValue();
    }

    int integer(JsonNode n, String ptr, String key, int dflt, int min, int max) {
        JsonNode v = n.get(key);
        if (v == null) {
            return dflt;
        }
        if (!v.canConvertToInt() || !v.isIntegralNumber() || v.intValue() < min || v.intValue() > max) {
            throw err(ptr + "/" + key, "'" + key + "' must be an integer from " + min + " to " + max);
        }
        return v.intValue();
    }

    PipelineDefinitionException err(String ptr, String problem) {
        Optional<Position> l = location(ptr);
        return new PipelineDefinitionException(
                file,
                l.map(p -> (int) p.line()).orElse(1),
                l.map(p -> (int) p.column()).orElse(1),
                problem);
    }

    /** Where the node at {@code ptr} (or its nearest located ancestor) starts. */
    private Optional<Position> location(String ptr) {
        return document.position(KeyPath.ofPointer(ptr));
    }
}
