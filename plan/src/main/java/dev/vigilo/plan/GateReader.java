package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads a profile's {@code gates} (docs/formats/plan-profile.md): at least one, at most {@link Profile#MAX_GATES},
 * uniquely named, each naming the evaluators it requires (defined under {@code evaluators}, each once), the cases it
 * selects, its pass threshold and how it decides ({@code decide}: on the point rate or on the interval).
 */
final class GateReader {
    private static final KeyPath GATES = KeyPath.root().key("gates");
    private static final Map<String, Profile.Decide> DECIDE = decideRules();

    private final ProfileFields fields;
    private final ConfigReader reader;

    GateReader(ProfileFields fields) {
        this.fields = fields;
        this.reader = fields.reader();
    }

    List<Profile.Gate> gates(JsonNode given, List<Profile.Evaluator> evaluators, double confidence) {
        List<Profile.Gate> out = new ArrayList<>();
        Optional<JsonNode> list = fields.entries(given, GATES, "gate", "gates", Profile.MAX_GATES);
        if (list.isEmpty()) {
            return out;
        }
        JsonNode node = list.get();
        Set<String> evaluatorNames = new HashSet<>();
        evaluators.forEach(e -> evaluatorNames.add(e.name()));
        Set<String> names = new HashSet<>();
        for (int i = 0; i < node.size(); i++) {
            KeyPath at = GATES.index(i);
            JsonNode g = node.get(i);
            if (!g.isObject()) {
                reader.problem(at, "must be a mapping, got " + ConfigReader.typeOf(g));
                continue;
            }
            reader.allowKeys(
                    g,
                    at,
                    List.of(
                            "name",
                            "required_evaluators",
                            "groups",
                            "tags_all",
                            "tags_any",
                            "min_pass_rate",
                            "decide"));
            String name = fields.name(g.get("name"), at.key("name"), true);
            if (name != null && !names.add(name)) {
                reader.problem(at.key("name"), "duplicate gate name \"" + name + "\"; names must be unique");
            }
            List<String> required =
                    required(g.get("required_evaluators"), at.key("required_evaluators"), evaluatorNames);
            Profile.Selector selector = fields.selector(g, at, false);
            double rate = minPassRate(g.get("min_pass_rate"), at.key("min_pass_rate"));
            Profile.Decide decide = reader.oneOf(g.get("decide"), at.key("decide"), false, "decision rule", DECIDE)
                    .orElse(Profile.Decide.POINT);
            if (name != null) {
                out.add(new Profile.Gate(name, required, selector, rate, decide, confidence));
            }
        }
        return out;
    }

    private List<String> required(JsonNode re, KeyPath at, Set<String> evaluatorNames) {
        List<String> required = new ArrayList<>();
        if (re == null) {
            reader.problem(at, "is required: list the evaluators this gate needs");
        } else if (!re.isArray() || re.isEmpty()) {
            reader.problem(at, "must be a non-empty list of evaluator names");
        } else {
            for (int j = 0; j < re.size(); j++) {
                KeyPath rat = at.index(j);
                String en = fields.text(re.get(j), rat, true);
                if (en == null) {
                    continue;
                }
                if (!evaluatorNames.contains(en)) {
                    reader.problem(rat, "unknown evaluator \"" + en + "\"; define it under evaluators or fix the name");
                } else if (required.contains(en)) {
                    reader.problem(rat, "evaluator \"" + en + "\" is listed twice");
                } else {
                    required.add(en);
                }
            }
        }
        return required;
    }

    private static Map<String, Profile.Decide> decideRules() {
        Map<String, Profile.Decide> rules = new LinkedHashMap<>();
        for (Profile.Decide d : Profile.Decide.values()) {
            rules.put(d.wire(), d);
        }
        return rules;
    }

    private double minPassRate(JsonNode mp, KeyPath at) {
        if (mp == null) {
            reader.problem(at, "is required: give the pass threshold in [0, 1]");
        } else if (!mp.isNumber() || mp.asDouble() < 0 || mp.asDouble() > 1 || Double.isNaN(mp.asDouble())) {
            reader.problem(at, "must be a number in [0, 1], got " + mp);
        } else {
            return mp.asDouble();
        }
        return 1.0;
    }
}
