package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.input.InputFiles;
import dev.vigilo.common.input.TextEncoding;
import dev.vigilo.config.ConfigDocument;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.ConfigSyntaxException;
import dev.vigilo.config.KeyPath;
import dev.vigilo.config.Position;
import dev.vigilo.config.ReadOptions;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Parses a pipeline YAML file (format in docs/datagen.md) through {@code config}'s {@link ConfigReader}. It stops at
 * the first problem ({@link PipelineDefinitionException}, one line in the one location style
 * {@code FILE:LINE:COLUMN: key.path: what; what to do}): a pipeline is used whole or not at all. Unknown keys are
 * errors (a typo must not silently change behaviour).
 */
public final class PipelineParser {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}");
    private static final KeyPath ROOT = KeyPath.root();
    private static final List<String> TOP_KEYS = List.of("name", "input", "id_field", "prices", "budget", "steps");
    private static final List<String> COMMON = List.of("name", "kind", "retries", "timeout_seconds", "concurrency");
    private static final Map<String, StepKind> KINDS = kinds();
    private static final Map<StepKind, List<String>> KIND_KEYS = Map.of(
            StepKind.COMMAND, List.of("command"),
            StepKind.HTTP, List.of("url", "model", "prompt", "output_field"),
            StepKind.TEMPLATE, List.of("template", "output_field"),
            StepKind.FILTER, List.of("keep_if"),
            StepKind.EXPAND, List.of("field", "as"),
            StepKind.LOOP, List.of("body", "until", "max_iterations"),
            StepKind.CHAT, ChatParser.KEYS,
            StepKind.DEDUP, List.of("field", "method", "threshold"));
    private static final Map<String, DedupSpec.Method> DEDUP_METHODS = dedupMethods();

    private final String file;
    /** Stops at the first problem, throwing it as a {@link PipelineDefinitionException}. */
    private ConfigReader reader;
    /** The pipeline's {@code prices} by model; null when it gives none. */
    private Map<String, ChatSpec.Price> prices;
    /** The pipeline's {@code budget}; null when it gives none. */
    private PipelineSpec.Budget budget;
    /** Rate limit per chat url and the path of the step's rate_limit that set it: one endpoint, one limit. */
    private final Map<String, Map.Entry<ChatSpec.RateLimit, KeyPath>> limits = new HashMap<>();

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
        ConfigDocument document;
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
        reader = ConfigReader.firstProblem(document, PipelineDefinitionException::new);
        JsonNode root = document.root();
        if (root == null || !root.isObject()) {
            throw reader.failure(ROOT, "the pipeline must be a YAML mapping with input and steps");
        }
        reader.allowKeys(root, ROOT, TOP_KEYS);
        KeyPath nameAt = ROOT.key("name");
        String name = reader.text(root.get("name"), nameAt, false).orElse(null);
        if (name == null) {
            String fileName = Path.of(file).getFileName().toString().replaceFirst("\\.ya?ml$", "");
            if (!NAME.matcher(fileName).matches()) {
                throw reader.failure(
                        nameAt,
                        "is absent and the file name \"" + fileName + "\" is not a valid pipeline name; give name:"
                                + " (letters, digits, '.', '_' or '-')");
            }
            name = fileName;
        } else if (!NAME.matcher(name).matches()) {
            throw reader.failure(
                    nameAt, "\"" + name + "\" is not a valid pipeline name; use letters, digits, '.', '_' or '-'");
        }
        // A first-problem reader has thrown already when a required value is absent or wrong.
        String input = reader.text(root.get("input"), ROOT.key("input"), true).orElseThrow();
        String idField =
                reader.text(root.get("id_field"), ROOT.key("id_field"), false).orElse(null);
        prices = new ChatParser(this, reader).prices(root.get("prices"), ROOT.key("prices"));
        budget = budget(root.get("budget"), ROOT.key("budget"), file);
        KeyPath stepsAt = ROOT.key("steps");
        JsonNode steps = root.get("steps");
        if (steps == null || steps.isNull()) {
            throw reader.failure(stepsAt, "is required: a non-empty list of steps");
        }
        if (!steps.isArray() || steps.isEmpty()) {
            throw reader.failure(
                    stepsAt,
                    "must be a non-empty list of steps"
                            + (steps.isArray() ? "" : ", got " + ConfigReader.typeOf(steps)));
        }
        List<StepSpec> out = new ArrayList<>();
        Map<String, KeyPath> names = new HashMap<>();
        for (int i = 0; i < steps.size(); i++) {
            KeyPath at = stepsAt.index(i);
            StepSpec s = step(steps.get(i), at);
            KeyPath earlier = names.putIfAbsent(s.name(), at.key("name"));
            if (earlier != null) {
                throw reader.failure(
                        at.key("name"),
                        "duplicate step name \"" + s.name() + "\" (also at " + earlier
                                + "); step names must be unique");
            }
            out.add(s);
        }
        return new PipelineSpec(
                name, baseDir == null ? Path.of(input) : baseDir.resolve(input).normalize(), idField, out, budget);
    }

    /** {@code budget: {max_cost: D}}; null when absent. A budget needs prices: a call's cost comes from them. */
    private PipelineSpec.Budget budget(JsonNode n, KeyPath at, String file) {
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isObject()) {
            throw reader.failure(at, "must be a mapping {max_cost}, got " + ConfigReader.typeOf(n));
        }
        reader.allowKeys(n, at, List.of("max_cost"));
        java.math.BigDecimal max = reader.decimal(
                        n.get("max_cost"), at.key("max_cost"), true, java.math.BigDecimal.ZERO)
                .orElseThrow();
        if (prices == null) {
            throw reader.failure(
                    at,
                    "needs prices (the cost of each model call comes from them); add prices with"
                            + " {prompt_per_million, completion_per_million} for every chat model");
        }
        return new PipelineSpec.Budget(max, file);
    }

    /** The pipeline's budget (null: none), known before its steps are read. */
    PipelineSpec.Budget budget() {
        return budget;
    }

    private StepSpec step(JsonNode n, KeyPath at) {
        if (!n.isObject()) {
            throw reader.failure(at, "must be a step: a mapping with name and kind, got " + ConfigReader.typeOf(n));
        }
        String name = reader.text(n.get("name"), at.key("name"), true).orElseThrow();
        StepKind kind = reader.oneOf(n.get("kind"), at.key("kind"), true, "step kind", KINDS)
                .orElseThrow();
        List<String> allowed = new ArrayList<>(COMMON);
        allowed.addAll(KIND_KEYS.get(kind));
        reader.allowKeys(n, at, allowed);
        int retries = reader.integer(n.get("retries"), at.key("retries"), 0, 100, 0);
        Duration timeout =
                Duration.ofSeconds(reader.integer(n.get("timeout_seconds"), at.key("timeout_seconds"), 1, 86_400, 60));
        int concurrency = reader.integer(n.get("concurrency"), at.key("concurrency"), 0, 10_000, 0);
        List<String> command = null;
        String url = null, model = null, template = null, output = null, listField = null, childField = null;
        Condition cond = null;
        StepSpec body = null;
        int maxIter = 0;
        ChatSpec chat = null;
        DedupSpec dedup = null;
        switch (kind) {
            case CHAT -> chat = new ChatParser(this, reader).chat(n, at, name);
            case COMMAND -> command = command(n.get("command"), at.key("command"));
            case HTTP -> {
                url = required(n, at, "url");
                model = required(n, at, "model");
                template = required(n, at, "prompt");
                output = required(n, at, "output_field");
            }
            case TEMPLATE -> {
                template = required(n, at, "template");
                output = required(n, at, "output_field");
            }
            case FILTER -> cond = condition(n.get("keep_if"), at.key("keep_if"));
            case EXPAND -> {
                listField = required(n, at, "field");
                childField = reader.text(n.get("as"), at.key("as"), false).orElse("element");
            }
            case DEDUP -> dedup = dedup(n, at);
            case LOOP -> {
                KeyPath bodyAt = at.key("body");
                JsonNode b = n.get("body");
                if (b == null || b.isNull()) {
                    throw reader.failure(bodyAt, "is required: one command, http, chat or template step");
                }
                body = step(b, bodyAt);
                if (body.kind() == StepKind.LOOP
                        || body.kind() == StepKind.EXPAND
                        || body.kind() == StepKind.FILTER
                        || body.kind() == StepKind.DEDUP) {
                    throw reader.failure(
                            bodyAt.key("kind"),
                            "a loop body must be a command, http, chat or template step, not "
                                    + body.kind().name().toLowerCase(Locale.ROOT));
                }
                cond = condition(n.get("until"), at.key("until"));
                KeyPath maxAt = at.key("max_iterations");
                if (n.get("max_iterations") == null) {
                    throw reader.failure(maxAt, "is required: the most iterations, an integer in [1, 10000]");
                }
                maxIter = reader.integer(n.get("max_iterations"), maxAt, 1, 10_000, 0);
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
                chat,
                dedup);
    }

    /** A dedup step's field, method (default exact) and, for minhash only, threshold in (0, 1] (default 0.85). */
    private DedupSpec dedup(JsonNode n, KeyPath at) {
        String field = required(n, at, "field");
        DedupSpec.Method method = reader.oneOf(n.get("method"), at.key("method"), false, "dedup method", DEDUP_METHODS)
                .orElse(DedupSpec.Method.EXACT);
        JsonNode t = n.get("threshold");
        KeyPath tAt = at.key("threshold");
        if (method == DedupSpec.Method.EXACT) {
            if (t != null && !t.isNull()) {
                throw reader.failure(tAt, "applies to method minhash only; remove it or set method: minhash");
            }
            return new DedupSpec(field, method, null);
        }
        if (t == null || t.isNull()) {
            return new DedupSpec(field, method, DedupSpec.DEFAULT_THRESHOLD);
        }
        BigDecimal threshold = reader.decimal(t, tAt, true, BigDecimal.ZERO).orElseThrow();
        if (threshold.signum() <= 0 || threshold.compareTo(BigDecimal.ONE) > 0) {
            throw reader.failure(tAt, "must be a number in (0, 1], got " + threshold.toPlainString());
        }
        return new DedupSpec(field, method, threshold);
    }

    /** A required string under {@code key} of the step at {@code at}. */
    private String required(JsonNode n, KeyPath at, String key) {
        return reader.text(n.get(key), at.key(key), true).orElseThrow();
    }

    /** A command step's program: a non-empty list of arguments, or a shell string run with {@code sh -c}. */
    private List<String> command(JsonNode c, KeyPath at) {
        if (c == null || c.isNull()) {
            throw reader.failure(at, "is required: a list of arguments or a shell string");
        }
        if (c.isTextual()) {
            return List.of("sh", "-c", c.textValue());
        }
        if (!c.isArray() || c.isEmpty()) {
            throw reader.failure(
                    at,
                    "must be a non-empty list of arguments or a shell string"
                            + (c.isArray() ? "" : ", got " + ConfigReader.typeOf(c)));
        }
        List<String> command = new ArrayList<>();
        for (int i = 0; i < c.size(); i++) {
            // An empty argument is an argument (not reader.text, which refuses empty strings).
            if (!c.get(i).isTextual()) {
                throw reader.failure(at.index(i), "must be a string, got " + ConfigReader.typeOf(c.get(i)));
            }
            command.add(c.get(i).textValue());
        }
        return command;
    }

    /** The pipeline's prices (null: none given). */
    Map<String, ChatSpec.Price> prices() {
        return prices;
    }

    /** Records {@code url}'s rate limit set at {@code at}; a problem if another step set a different one. */
    void rateLimit(String url, ChatSpec.RateLimit limit, KeyPath at) {
        Map.Entry<ChatSpec.RateLimit, KeyPath> earlier = limits.putIfAbsent(url, Map.entry(limit, at));
        if (earlier != null && !earlier.getKey().equals(limit)) {
            KeyPath other = earlier.getValue();
            throw reader.failure(
                    at,
                    "differs from the rate_limit set for the same url at " + other
                            + reader.document()
                                    .position(other)
                                    .map(p -> " (" + p + ")")
                                    .orElse("")
                            + "; an endpoint has one limit, give every step that calls it the same rate_limit");
        }
    }

    /** Where the node at {@code at} stands, for a problem found after parsing (a missing api_key_env variable). */
    ChatSpec.SourcePosition position(KeyPath at) {
        Optional<Position> p = reader.document().position(at);
        return new ChatSpec.SourcePosition(
                file,
                p.map(x -> (int) x.line()).orElse(0),
                p.map(x -> (int) x.column()).orElse(0),
                at.toString());
    }

    /** {@code {field: F[, equals: V][, at_least: N][, at_most: N][, in: [V, ...]]}}, required. */
    private Condition condition(JsonNode c, KeyPath at) {
        String shape = "a mapping {field: F[, equals: V][, at_least: N][, at_most: N][, in: [V, ...]]}";
        if (c == null || c.isNull()) {
            throw reader.failure(at, "is required: " + shape);
        }
        if (!c.isObject()) {
            throw reader.failure(at, "must be " + shape + ", got " + ConfigReader.typeOf(c));
        }
        reader.allowKeys(c, at, List.of("field", "equals", "at_least", "at_most", "in"));
        BigDecimal atLeast = bound(c.get("at_least"), at.key("at_least"));
        BigDecimal atMost = bound(c.get("at_most"), at.key("at_most"));
        if (atLeast != null && atMost != null && atLeast.compareTo(atMost) > 0) {
            throw reader.failure(
                    at.key("at_most"),
                    "must be >= at_least (" + atLeast.toPlainString() + "), got " + atMost.toPlainString());
        }
        List<JsonNode> in = new ArrayList<>();
        JsonNode values = c.get("in");
        if (values != null) {
            if (!values.isArray() || values.isEmpty()) {
                throw reader.failure(at.key("in"), "must be a non-empty list of values, got " + values);
            }
            values.forEach(in::add);
        }
        return new Condition(
                reader.text(c.get("field"), at.key("field"), true).orElseThrow(), c.get("equals"), atLeast, atMost, in);
    }

    /** A bound of a condition: a number as written, or null when absent. */
    private BigDecimal bound(JsonNode n, KeyPath at) {
        if (n == null) {
            return null;
        }
        if (!n.isNumber()) {
            throw reader.failure(at, "must be a number, got " + n);
        }
        return n.decimalValue();
    }

    /** In the order the message lists them. */
    private static Map<String, DedupSpec.Method> dedupMethods() {
        Map<String, DedupSpec.Method> methods = new LinkedHashMap<>();
        methods.put("exact", DedupSpec.Method.EXACT);
        methods.put("minhash", DedupSpec.Method.MINHASH);
        return methods;
    }

    private static Map<String, StepKind> kinds() {
        Map<String, StepKind> kinds = new LinkedHashMap<>();
        for (StepKind k : StepKind.values()) {
            kinds.put(k.name().toLowerCase(Locale.ROOT), k);
        }
        return kinds;
    }
}
