package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.config.AttemptLimits;
import dev.vigilo.config.CompiledSchema;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import dev.vigilo.config.RubricTemplate;
import dev.vigilo.config.SafeRegex;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Reads a profile's {@code evaluators} (docs/formats/plan-profile.md): at least one, at most
 * {@link Profile#MAX_EVALUATORS}, uniquely named, each of a known kind with that kind's parameters in canonical form.
 * Regular expressions are checked with the engine and limits workers evaluate with ({@link SafeRegex}), JSON Schemas
 * with the validator they validate with ({@link CompiledSchema}), judges' rubrics with the template workers render
 * ({@link RubricTemplate}).
 */
final class EvaluatorReader {
    private static final KeyPath EVALUATORS = KeyPath.root().key("evaluators");
    private static final Map<String, Profile.EvaluatorKind> KINDS = kinds();
    /** A latency evaluator's largest {@code max_ms}: one day (as agent's {@code Evaluators} checks it). */
    private static final long MAX_LATENCY_MS = 86_400_000;

    /** The keys of a judge, besides {@code name}, {@code kind} and {@code applies_to}. */
    private static final List<String> JUDGE_KEYS = List.of(
            "url",
            "model",
            "api_key_env",
            "rubric",
            "scale",
            "grades",
            "pass_score",
            "max_attempts",
            "timeout_seconds",
            "temperature",
            "max_tokens",
            "allow_self_judge",
            "rate_limit",
            "circuit_breaker");
    /** A judge's (and a mean/min panel's) pass score when none is given: the middle of the normalised scale. */
    static final double JUDGE_PASS_SCORE = 0.5;
    /** A tool_use evaluator's largest {@code max_calls} (as agent's {@code Evaluators} checks it). */
    static final int MAX_TOOL_CALLS = 100_000;
    /** The most judges a panel may have. */
    static final int MAX_PANEL_JUDGES = 16;
    /** The most grades a judge may have. */
    static final int MAX_GRADES = 26;

    private static final Pattern GRADE = Pattern.compile("\\S{1,32}");

    private final ProfileFields fields;
    private final ConfigReader reader;
    private final Profile.Agent agent;

    /** {@code agent} is the profile's, for refusing a judge that is the agent itself. */
    EvaluatorReader(ProfileFields fields, Profile.Agent agent) {
        this.fields = fields;
        this.reader = fields.reader();
        this.agent = agent;
    }

    List<Profile.Evaluator> evaluators(JsonNode given) {
        List<Profile.Evaluator> out = new ArrayList<>();
        Optional<JsonNode> list = fields.entries(given, EVALUATORS, "evaluator", "entries", Profile.MAX_EVALUATORS);
        if (list.isEmpty()) {
            return out;
        }
        JsonNode node = list.get();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < node.size(); i++) {
            evaluator(node.get(i), EVALUATORS.index(i), names).ifPresent(out::add);
        }
        return out;
    }

    private Optional<Profile.Evaluator> evaluator(JsonNode e, KeyPath at, Set<String> names) {
        if (!e.isObject()) {
            reader.problem(at, "must be a mapping, got " + ConfigReader.typeOf(e));
            return Optional.empty();
        }
        String name = fields.name(e.get("name"), at.key("name"), true);
        if (name != null && !names.add(name)) {
            reader.problem(at.key("name"), "duplicate evaluator name \"" + name + "\"; names must be unique");
        }
        ObjectNode params = JsonNodeFactory.instance.objectNode();
        Optional<Profile.EvaluatorKind> kind =
                reader.oneOf(e.get("kind"), at.key("kind"), true, "evaluator kind", KINDS);
        kind.ifPresent(k -> parameters(k, e, at, params));
        Optional<Profile.Selector> applies = Optional.empty();
        if (e.get("applies_to") != null) {
            applies = Optional.of(fields.selector(e.get("applies_to"), at.key("applies_to"), true));
        }
        if (name == null || kind.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new Profile.Evaluator(name, kind.get(), params, applies));
    }

    private void parameters(Profile.EvaluatorKind kind, JsonNode e, KeyPath at, ObjectNode params) {
        switch (kind) {
            case EXACT_MATCH -> {
                reader.allowKeys(e, at, List.of("name", "kind", "applies_to", "case_sensitive", "trim"));
                params.put("case_sensitive", reader.bool(e.get("case_sensitive"), at.key("case_sensitive"), true));
                params.put("trim", reader.bool(e.get("trim"), at.key("trim"), true));
            }
            case CONTAINS -> {
                reader.allowKeys(e, at, List.of("name", "kind", "applies_to", "case_sensitive"));
                params.put("case_sensitive", reader.bool(e.get("case_sensitive"), at.key("case_sensitive"), true));
            }
            case REGEX -> {
                reader.allowKeys(e, at, List.of("name", "kind", "applies_to", "pattern"));
                String p = fields.text(e.get("pattern"), at.key("pattern"), false);
                if (p != null) {
                    // The engine and limits the workers evaluate with: RE2 syntax, linear-time matching.
                    try {
                        SafeRegex.compile(p);
                    } catch (InvalidInputException x) {
                        reader.problem(at.key("pattern"), x.getMessage());
                    }
                }
                params.put("pattern", p);
            }
            case COMMAND -> {
                reader.allowKeys(
                        e,
                        at,
                        List.of("name", "kind", "applies_to", "command", "timeout_seconds", "pass_score", "env"));
                params.set("command", fields.argv(e.get("command"), at.key("command")));
                params.put(
                        "timeout_seconds",
                        reader.integer(e.get("timeout_seconds"), at.key("timeout_seconds"), 1, 3600, 60));
                params.put(
                        "pass_score",
                        fields.number(e.get("pass_score"), at.key("pass_score"), 0, 1)
                                .orElse(1.0));
                params.set("env", fields.env(e.get("env"), at.key("env")));
            }
            case JSON -> {
                reader.allowKeys(e, at, List.of("name", "kind", "applies_to", "schema"));
                params.set("schema", schema(e.get("schema"), at.key("schema")));
            }
            case NUMERIC -> {
                reader.allowKeys(e, at, List.of("name", "kind", "applies_to", "tolerance", "relative_tolerance"));
                Optional<Double> tolerance = tolerance(e.get("tolerance"), at.key("tolerance"));
                Optional<Double> relative = tolerance(e.get("relative_tolerance"), at.key("relative_tolerance"));
                boolean given = e.get("tolerance") != null;
                if (given == (e.get("relative_tolerance") != null)) {
                    reader.problem(
                            given ? at.key("relative_tolerance") : at,
                            given
                                    ? "is given beside tolerance; give exactly one of tolerance (absolute) and"
                                            + " relative_tolerance"
                                    : "needs tolerance (absolute) or relative_tolerance; give exactly one");
                }
                // Both keys, the one not given null: one shape for every numeric evaluator.
                params.put("tolerance", tolerance.orElse(null));
                params.put("relative_tolerance", relative.orElse(null));
            }
            case SIMILARITY -> {
                reader.allowKeys(e, at, List.of("name", "kind", "applies_to", "threshold", "case_sensitive", "trim"));
                if (e.get("threshold") == null) {
                    reader.problem(at.key("threshold"), "is required: the least similarity in [0, 1] that passes");
                }
                params.put(
                        "threshold",
                        fields.number(e.get("threshold"), at.key("threshold"), 0, 1)
                                .orElse(null));
                params.put("case_sensitive", reader.bool(e.get("case_sensitive"), at.key("case_sensitive"), true));
                params.put("trim", reader.bool(e.get("trim"), at.key("trim"), true));
            }
            case LATENCY -> {
                reader.allowKeys(e, at, List.of("name", "kind", "applies_to", "max_ms"));
                if (e.get("max_ms") == null) {
                    reader.problem(
                            at.key("max_ms"),
                            "is required: the agent's most milliseconds that pass, 1.." + MAX_LATENCY_MS);
                }
                params.put("max_ms", reader.longInteger(e.get("max_ms"), at.key("max_ms"), 1, MAX_LATENCY_MS, 0));
            }
            case COST -> {
                reader.allowKeys(e, at, List.of("name", "kind", "applies_to", "max_usd"));
                reader.decimal(e.get("max_usd"), at.key("max_usd"), true, java.math.BigDecimal.ZERO)
                        .ifPresent(max -> {
                            if (max.signum() == 0) {
                                reader.problem(at.key("max_usd"), "must be greater than 0");
                            }
                            // A decimal string: money is exact in the canonical profile (as pricing is).
                            params.put("max_usd", dev.vigilo.llm.Pricing.text(max));
                        });
            }
            case JUDGE -> {
                List<String> allowed = new ArrayList<>(List.of("name", "kind", "applies_to"));
                allowed.addAll(JUDGE_KEYS);
                reader.allowKeys(e, at, allowed);
                judge(e, at, params);
            }
            case PANEL -> panel(e, at, params);
            case TOOL_USE -> toolUse(e, at, params);
        }
    }

    /**
     * A {@code tool_use} evaluator: {@code require} (a list of {@code {name, arguments}}, arguments a mapping matched
     * as a subset, keys sorted), {@code forbid} (tool names), {@code max_calls} (0..{@value #MAX_TOOL_CALLS}, null when
     * absent) and {@code ordered} (default false); at least one of the first three. With an http agent that has tools
     * (and no {@code mcp_servers}, whose tools are known only at run time), every tool named must be one of them.
     */
    private void toolUse(JsonNode e, KeyPath at, ObjectNode params) {
        reader.allowKeys(e, at, List.of("name", "kind", "applies_to", "require", "forbid", "max_calls", "ordered"));
        Set<String> agentTools = new HashSet<>();
        agent.parameters()
                .path("tools")
                .forEach(t -> agentTools.add(t.path("name").asText()));
        if (agent.parameters().has("mcp_servers")) {
            // An MCP server's tools are known only when an attempt lists them: no name can be refused here.
            agentTools.clear();
        }
        ArrayNode require = params.putArray("require");
        JsonNode r = e.get("require");
        if (r != null) {
            if (!r.isArray() || r.isEmpty()) {
                reader.problem(at.key("require"), "must be a non-empty list of {name, arguments}");
            } else {
                for (int i = 0; i < r.size(); i++) {
                    KeyPath rAt = at.key("require").index(i);
                    if (reader.mapping(r.get(i), rAt).isEmpty()) {
                        continue;
                    }
                    reader.allowKeys(r.get(i), rAt, List.of("name", "arguments"));
                    String name = toolName(r.get(i).get("name"), rAt.key("name"), agentTools);
                    ObjectNode one = require.addObject().put("name", name);
                    JsonNode args = r.get(i).get("arguments");
                    if (args == null) {
                        one.putNull("arguments");
                    } else if (!args.isObject()) {
                        reader.problem(
                                rAt.key("arguments"),
                                "must be a mapping (the arguments the call must contain), got "
                                        + ConfigReader.typeOf(args));
                        one.putNull("arguments");
                    } else {
                        one.set("arguments", sorted(args));
                    }
                }
            }
        }
        ArrayNode forbid = params.putArray("forbid");
        JsonNode f = e.get("forbid");
        if (f != null) {
            if (!f.isArray() || f.isEmpty()) {
                reader.problem(at.key("forbid"), "must be a non-empty list of tool names");
            } else {
                Set<String> seen = new HashSet<>();
                for (int i = 0; i < f.size(); i++) {
                    String name = toolName(f.get(i), at.key("forbid").index(i), agentTools);
                    if (name != null && seen.add(name)) {
                        forbid.add(name);
                    }
                    if (name != null && require.findValuesAsText("name").contains(name)) {
                        reader.problem(at.key("forbid").index(i), "\"" + name + "\" is also required");
                    }
                }
            }
        }
        JsonNode max = e.get("max_calls");
        if (max == null) {
            params.putNull("max_calls");
        } else {
            params.put("max_calls", reader.integer(max, at.key("max_calls"), 0, MAX_TOOL_CALLS, 0));
        }
        params.put("ordered", reader.bool(e.get("ordered"), at.key("ordered"), false));
        if (r == null && f == null && max == null) {
            reader.problem(at, "needs require, forbid or max_calls: what the agent's tool calls are judged by");
        }
    }

    /** A tool name of a tool_use evaluator; with an http agent that has tools, one of them. */
    private String toolName(JsonNode node, KeyPath at, Set<String> agentTools) {
        String name = fields.text(node, at, true);
        if (name != null && !agentTools.isEmpty() && !agentTools.contains(name)) {
            reader.problem(
                    at,
                    "the agent has no tool \"" + name + "\"; its tools are: "
                            + String.join(", ", new java.util.TreeSet<>(agentTools)));
        }
        return name;
    }

    /**
     * A judge's parameters, in canonical form: every key, defaults filled in ({@code api_key_env}, {@code scale} or
     * {@code grades}, and {@code max_tokens} null when not given). A judge whose endpoint and model are the http
     * agent's is refused unless {@code allow_self_judge: true}.
     */
    private void judge(JsonNode e, KeyPath at, ObjectNode params) {
        String url = fields.text(e.get("url"), at.key("url"), true);
        if (url != null) {
            fields.endpointUrl(url, at.key("url"));
        }
        params.put("url", url);
        String model = fields.text(e.get("model"), at.key("model"), true);
        params.put("model", model);
        params.put("api_key_env", fields.keyEnv(e.get("api_key_env"), at.key("api_key_env")));
        String rubric = fields.text(e.get("rubric"), at.key("rubric"), true);
        if (rubric != null) {
            try {
                RubricTemplate.parse(rubric);
            } catch (InvalidInputException x) {
                reader.problem(at.key("rubric"), x.getMessage());
            }
        }
        params.put("rubric", rubric);
        JsonNode scale = e.get("scale");
        JsonNode grades = e.get("grades");
        if ((scale == null) == (grades == null)) {
            reader.problem(
                    scale == null ? at : at.key("grades"),
                    scale == null
                            ? "needs scale: {min, max} or grades: {LETTER: score}; give exactly one"
                            : "is given beside scale; give exactly one of scale and grades");
        }
        params.set("scale", scale(scale, at.key("scale")));
        params.set("grades", grades(grades, at.key("grades")));
        params.put(
                "pass_score",
                fields.number(e.get("pass_score"), at.key("pass_score"), 0, 1).orElse(JUDGE_PASS_SCORE));
        params.put(
                "max_attempts",
                reader.integer(
                        e.get("max_attempts"),
                        at.key("max_attempts"),
                        1,
                        AttemptLimits.MAX_ATTEMPTS,
                        AttemptLimits.DEFAULT_MAX_ATTEMPTS));
        params.put(
                "timeout_seconds", reader.integer(e.get("timeout_seconds"), at.key("timeout_seconds"), 1, 3600, 120));
        params.put(
                "temperature",
                fields.number(e.get("temperature"), at.key("temperature"), 0, 2).orElse(0.0));
        JsonNode mt = e.get("max_tokens");
        params.put("max_tokens", mt == null ? null : reader.integer(mt, at.key("max_tokens"), 1, 1_000_000, 1));
        boolean allowSelf = reader.bool(e.get("allow_self_judge"), at.key("allow_self_judge"), false);
        params.put("allow_self_judge", allowSelf);
        new EndpointLimitReader(reader).read(e, at, params);
        if (!allowSelf
                && url != null
                && model != null
                && agent.kind() == Profile.AgentKind.HTTP
                && model.equals(agent.parameters().path("model").asText())
                && sameEndpoint(url, agent.parameters().path("url").asText())) {
            reader.problem(
                    at,
                    "judges the agent with itself (the same url and model as agent); use another model, or set"
                            + " allow_self_judge: true to allow it");
        }
    }

    /** {@code scale: {min, max}}: finite numbers, min below max; null when absent or wrong (after reporting it). */
    private JsonNode scale(JsonNode node, KeyPath at) {
        if (node == null || reader.mapping(node, at).isEmpty()) {
            return JsonNodeFactory.instance.nullNode();
        }
        reader.allowKeys(node, at, List.of("min", "max"));
        for (String k : List.of("min", "max")) {
            if (node.get(k) == null) {
                reader.problem(
                        at.key(k), "is required: the scale's " + (k.equals("min") ? "least" : "greatest") + " score");
            }
        }
        Optional<Double> min = fields.number(node.get("min"), at.key("min"), -1e15, 1e15);
        Optional<Double> max = fields.number(node.get("max"), at.key("max"), -1e15, 1e15);
        if (min.isEmpty() || max.isEmpty()) {
            return JsonNodeFactory.instance.nullNode();
        }
        if (!(min.get() < max.get())) {
            reader.problem(at.key("max"), "must be greater than min");
            return JsonNodeFactory.instance.nullNode();
        }
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        out.put("min", min.get());
        out.put("max", max.get());
        return out;
    }

    /**
     * {@code grades: {LETTER: score}}: 2..{@link #MAX_GRADES} grades (1..32 characters without blanks), each worth
     * a score in [0, 1], kept in the profile's order (the order the judge is offered them in); null when absent.
     */
    private JsonNode grades(JsonNode node, KeyPath at) {
        if (node == null || reader.mapping(node, at).isEmpty()) {
            return JsonNodeFactory.instance.nullNode();
        }
        if (node.size() < 2 || node.size() > MAX_GRADES) {
            reader.problem(at, "has " + node.size() + " grades; give 2.." + MAX_GRADES);
        }
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        for (Map.Entry<String, JsonNode> g : node.properties()) {
            if (!GRADE.matcher(g.getKey()).matches()) {
                reader.problem(at.key(g.getKey()), "is not a valid grade: use 1..32 characters without blanks");
            }
            if (g.getValue() == null || g.getValue().isNull()) {
                reader.problem(at.key(g.getKey()), "needs its score in [0, 1]");
            }
            fields.number(g.getValue(), at.key(g.getKey()), 0, 1).ifPresent(v -> out.put(g.getKey(), v));
        }
        return out;
    }

    /**
     * A panel: {@code judges} (2..{@link #MAX_PANEL_JUDGES} judges, each a judge's keys with a unique {@code name};
     * {@code kind: judge} may be written), {@code aggregate} (required: mean, min or majority) and {@code pass_score}
     * (mean and min only; majority passes when more than half of the judges pass, each at its own pass score).
     */
    private void panel(JsonNode e, KeyPath at, ObjectNode params) {
        reader.allowKeys(e, at, List.of("name", "kind", "applies_to", "judges", "aggregate", "pass_score"));
        KeyPath jat = at.key("judges");
        JsonNode list = e.get("judges");
        ArrayNode judges = params.putArray("judges");
        if (list == null) {
            reader.problem(jat, "is required: give two or more judges");
        } else if (!list.isArray()) {
            reader.problem(jat, "must be a list of judges, got " + ConfigReader.typeOf(list));
        } else {
            if (list.size() < 2 || list.size() > MAX_PANEL_JUDGES) {
                reader.problem(jat, "has " + list.size() + " judges; a panel has 2.." + MAX_PANEL_JUDGES);
            }
            Set<String> names = new HashSet<>();
            for (int j = 0; j < list.size() && j < MAX_PANEL_JUDGES; j++) {
                JsonNode judge = list.get(j);
                KeyPath at2 = jat.index(j);
                if (reader.mapping(judge, at2).isEmpty()) {
                    continue;
                }
                List<String> allowed = new ArrayList<>(List.of("name", "kind"));
                allowed.addAll(JUDGE_KEYS);
                reader.allowKeys(judge, at2, allowed);
                JsonNode k = judge.get("kind");
                if (k != null && !"judge".equals(k.asText())) {
                    reader.problem(at2.key("kind"), "must be judge (or left out): a panel's members are judges");
                }
                ObjectNode out = judges.addObject();
                String name = fields.name(judge.get("name"), at2.key("name"), true);
                if (name != null && !names.add(name)) {
                    reader.problem(at2.key("name"), "duplicate judge name \"" + name + "\"; names must be unique");
                }
                out.put("name", name);
                judge(judge, at2, out);
            }
        }
        String aggregate = fields.text(e.get("aggregate"), at.key("aggregate"), false);
        if (e.get("aggregate") == null) {
            reader.problem(at.key("aggregate"), "is required: mean, min or majority");
        } else if (aggregate != null && !List.of("mean", "min", "majority").contains(aggregate)) {
            reader.problem(at.key("aggregate"), "unknown aggregate \"" + aggregate + "\"; use mean, min or majority");
            aggregate = null;
        }
        params.put("aggregate", aggregate);
        if ("majority".equals(aggregate)) {
            if (e.get("pass_score") != null) {
                reader.problem(
                        at.key("pass_score"),
                        "is for mean and min; majority passes when more than half of the judges pass (each at its own"
                                + " pass_score): remove it");
            }
            params.putNull("pass_score");
        } else {
            params.put(
                    "pass_score",
                    fields.number(e.get("pass_score"), at.key("pass_score"), 0, 1)
                            .orElse(JUDGE_PASS_SCORE));
        }
    }

    /** Whether two endpoint URLs name the same endpoint: scheme and host ignoring case, path normalised. */
    static boolean sameEndpoint(String a, String b) {
        try {
            URI x = new URI(a).normalize();
            URI y = new URI(b).normalize();
            return equalsIgnoreCase(x.getScheme(), y.getScheme())
                    && equalsIgnoreCase(x.getHost(), y.getHost())
                    && port(x) == port(y)
                    && trimSlash(x.getPath()).equals(trimSlash(y.getPath()))
                    && Objects.equals(x.getQuery(), y.getQuery());
        } catch (URISyntaxException e) {
            return a.equals(b);
        }
    }

    private static boolean equalsIgnoreCase(String a, String b) {
        return a == null ? b == null : a.equalsIgnoreCase(b);
    }

    private static int port(URI u) {
        return u.getPort() >= 0 ? u.getPort() : "https".equalsIgnoreCase(u.getScheme()) ? 443 : 80;
    }

    private static String trimSlash(String p) {
        String s = p == null ? "" : p;
        return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    }

    /** A tolerance: a finite number >= 0, empty when absent or wrong (after reporting it). */
    private Optional<Double> tolerance(JsonNode node, KeyPath at) {
        return reader.decimal(node, at, false, BigDecimal.ZERO).flatMap(d -> {
            double v = d.doubleValue();
            if (Double.isInfinite(v)) {
                reader.problem(at, "is too large; give a number below " + Double.MAX_VALUE);
                return Optional.empty();
            }
            return Optional.of(v);
        });
    }

    /**
     * A json evaluator's schema: absent (null), or a mapping the validator accepts as a JSON Schema, with its keys
     * sorted at every depth (key order means nothing to a schema, so it must not change the profile's identity).
     */
    private JsonNode schema(JsonNode node, KeyPath at) {
        if (node == null || node.isNull()) {
            return JsonNodeFactory.instance.nullNode();
        }
        if (!node.isObject()) {
            reader.problem(at, "must be a mapping (a JSON Schema), got " + ConfigReader.typeOf(node));
            return JsonNodeFactory.instance.nullNode();
        }
        Optional<String> problem = CompiledSchema.problem(node);
        if (problem.isPresent()) {
            reader.problem(at, "is not a usable JSON Schema: " + problem.get());
        }
        return sorted(node);
    }

    /** {@code node} with its keys sorted at every depth. */
    static JsonNode sorted(JsonNode node) {
        if (node.isObject()) {
            ObjectNode out = JsonNodeFactory.instance.objectNode();
            new TreeMap<String, JsonNode>(
                            node.propertyStream().collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)))
                    .forEach((k, v) -> out.set(k, sorted(v)));
            return out;
        }
        if (node.isArray()) {
            ArrayNode out = JsonNodeFactory.instance.arrayNode();
            node.forEach(v -> out.add(sorted(v)));
            return out;
        }
        return node;
    }

    private static Map<String, Profile.EvaluatorKind> kinds() {
        Map<String, Profile.EvaluatorKind> kinds = new LinkedHashMap<>();
        for (Profile.EvaluatorKind k : Profile.EvaluatorKind.values()) {
            kinds.put(k.wire(), k);
        }
        return kinds;
    }
}
