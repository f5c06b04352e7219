package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import dev.vigilo.config.SafeRegex;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads a profile's {@code evaluators} (docs/formats/plan-profile.md): at least one, at most
 * {@link Profile#MAX_EVALUATORS}, uniquely named, each of a known kind with that kind's parameters in canonical form.
 * Regular expressions are checked with the engine and limits workers evaluate with ({@link SafeRegex}).
 */
final class EvaluatorReader {
    private static final KeyPath EVALUATORS = KeyPath.root().key("evaluators");
    private static final Map<String, Profile.EvaluatorKind> KINDS = kinds();

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
        }
    }

    private static Map<String, Profile.EvaluatorKind> kinds() {
        Map<String, Profile.EvaluatorKind> kinds = new LinkedHashMap<>();
        for (Profile.EvaluatorKind k : Profile.EvaluatorKind.values()) {
            kinds.put(k.wire(), k);
        }
        return kinds;
    }
}
