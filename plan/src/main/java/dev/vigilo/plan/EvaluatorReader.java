package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.config.CompiledSchema;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import dev.vigilo.config.SafeRegex;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Reads a profile's {@code evaluators} (docs/formats/plan-profile.md): at least one, at most
 * {@link Profile#MAX_EVALUATORS}, uniquely named, each of a known kind with that kind's parameters in canonical form.
 * Regular expressions are checked with the engine and limits workers evaluate with ({@link SafeRegex}), JSON Schemas
 * with the validator they validate with ({@link CompiledSchema}).
 */
final class EvaluatorReader {
    private static final KeyPath EVALUATORS = KeyPath.root().key("evaluators");
    private static final Map<String, Profile.EvaluatorKind> KINDS = kinds();
    /** A latency evaluator's largest {@code max_ms}: one day (as agent's {@code Evaluators} checks it). */
    private static final long MAX_LATENCY_MS = 86_400_000;

    private final ProfileFields fields;
    private final ConfigReader reader;

    EvaluatorReader(ProfileFields fields) {
        this.fields = fields;
        this.reader = fields.reader();
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
        }
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

    private static JsonNode sorted(JsonNode node) {
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
