package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A run's profile in readable form for its page, from the canonical profile its plan configuration froze
 * (docs/formats/plan-configuration.md, {@code profile}; the keys of docs/formats/plan-profile.md): the agent's
 * settings one per line (an http agent's {@code messages} and {@code tools} summarised), one row per evaluator (kind,
 * what it applies to, its other settings) and per gate (what it requires and selects, its minimum, what it decides
 * on), and the run-wide settings (epochs, confidence, limits, pricing, budget, sandbox) when the profile has them.
 */
final class ProfileView {
    /** The longest a setting's shown value may be. */
    private static final int SHOWN = 300;

    private static final Set<String> RUN_WIDE =
            Set.of("epochs", "confidence", "limits", "pricing", "budget", "sandbox");

    private ProfileView() {}

    /** The page's {@code profile} model: {@code agent}, {@code evaluators}, {@code gates}, {@code settings}. */
    static Map<String, Object> of(JsonNode profile) {
        Map<String, Object> m = new LinkedHashMap<>();
        JsonNode agent = profile.path("agent");
        List<Map<String, Object>> agentLines = new ArrayList<>();
        agent.fields().forEachRemaining(f -> agentLines.add(line(f.getKey(), agentValue(f.getKey(), f.getValue()))));
        m.put("agent", agentLines);
        List<Map<String, Object>> evaluators = new ArrayList<>();
        for (JsonNode e : profile.path("evaluators")) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("name", e.path("name").asText());
            r.put("kind", e.path("kind").asText());
            r.put("applies_to", e.has("applies_to") ? selector(e.path("applies_to")) : "every case");
            r.put("settings", rest(e, Set.of("name", "kind", "applies_to")));
            evaluators.add(r);
        }
        m.put("evaluators", evaluators);
        List<Map<String, Object>> gates = new ArrayList<>();
        for (JsonNode g : profile.path("gates")) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("name", g.path("name").asText());
            r.put("requires", join(g.path("required_evaluators")));
            r.put("selects", selector(g));
            r.put("min_pass_rate", Views.percent(g.path("min_pass_rate").asDouble()));
            r.put("decide", g.path("decide").asText("point"));
            gates.add(r);
        }
        m.put("gates", gates);
        List<Map<String, Object>> settings = new ArrayList<>();
        profile.fields().forEachRemaining(f -> {
            if (RUN_WIDE.contains(f.getKey())) {
                settings.add(line(f.getKey(), compact(f.getValue())));
            }
        });
        m.put("settings", settings);
        return m;
    }

    private static Map<String, Object> line(String key, String value) {
        return Map.of("key", key, "value", value);
    }

    /** An agent setting: long conversation templates and tool definitions are summarised by name. */
    private static String agentValue(String key, JsonNode v) {
        if (key.equals("tools") && v.isArray()) {
            List<String> names = new ArrayList<>();
            v.forEach(t -> names.add(t.path("name").asText("?")));
            return v.size() + " (" + String.join(", ", names) + ")";
        }
        if (key.equals("messages") && v.isArray()) {
            List<String> roles = new ArrayList<>();
            v.forEach(t -> roles.add(t.path("role").asText("?")));
            return v.size() + " turns (" + String.join(", ", roles) + ")";
        }
        return compact(v);
    }

    /** {@code groups math · tags_all easy}, or {@code every case}. */
    private static String selector(JsonNode n) {
        List<String> parts = new ArrayList<>();
        for (String k : List.of("groups", "tags_all", "tags_any")) {
            if (n.path(k).isArray() && !n.path(k).isEmpty()) {
                parts.add(k + " " + join(n.path(k)));
            }
        }
        return parts.isEmpty() ? "every case" : String.join(" · ", parts);
    }

    /** The fields of {@code n} other than {@code shown}, as {@code key: value} pairs. */
    private static String rest(JsonNode n, Set<String> shown) {
        List<String> parts = new ArrayList<>();
        Iterator<Map.Entry<String, JsonNode>> it = n.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> f = it.next();
            if (!shown.contains(f.getKey())) {
                parts.add(f.getKey() + ": " + compact(f.getValue()));
            }
        }
        return Views.cut(String.join(" · ", parts), SHOWN);
    }

    private static String join(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(x -> out.add(x.asText()));
        return String.join(", ", out);
    }

    /** A value as it reads: text as itself, anything else as compact JSON, cut. */
    private static String compact(JsonNode v) {
        return Views.cut(v.isTextual() ? v.asText() : v.toString(), SHOWN);
    }
}
