package dev.vigilo.plan;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.llm.Pricing;
import dev.vigilo.storage.Sha256;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The canonical JSON form of a {@link Profile}: fixed key order, defaults filled in, no whitespace. Two profiles that
 * mean the same thing (YAML or JSON, any key order, defaults explicit or not) encode to the same bytes, so the
 * SHA-256 of this encoding is the profile identity a repeated {@code run create} is compared by. Keys added after
 * version 1 was published ({@code epochs}, {@code confidence}, a gate's {@code decide}, an agent's {@code max_attempts}
 * and {@code seed_per_epoch}, an http agent's {@code tools} and {@code mcp_servers} (with {@code max_turns} and
 * {@code parallel_tool_calls}),
 * {@code pricing}, the per-case {@code limits}, {@code sandbox}) are written only when they differ from
 * their defaults (or are given), so every profile written before
 * them keeps its identity and giving a default explicitly means the same profile.
 */
final class ProfileJson {
    static final ObjectMapper MAPPER = new ObjectMapper();

    private ProfileJson() {}

    static ObjectNode tree(Profile p) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
        root.put("version", p.version());
        root.put("name", p.name());
        ObjectNode agent = root.putObject("agent");
        agent.put("kind", p.agent().kind().wire());
        agent.setAll((ObjectNode) p.agent().parameters());
        ArrayNode evaluators = root.putArray("evaluators");
        for (Profile.Evaluator e : p.evaluators()) {
            evaluators.add(evaluator(e));
        }
        ArrayNode gates = root.putArray("gates");
        for (Profile.Gate g : p.gates()) {
            ObjectNode n = gates.addObject();
            n.put("name", g.name());
            strings(n.putArray("required_evaluators"), g.requiredEvaluators());
            selector(n, g.selector());
            n.put("min_pass_rate", g.minPassRate());
            if (g.decide() != Profile.Decide.POINT) {
                n.put("decide", g.decide().wire());
            }
        }
        ObjectNode limits = root.putObject("limits");
        limits.put("max_cases", p.limits().maxCases());
        p.limits().caseSeconds().ifPresent(v -> limits.put("case_seconds", v));
        p.limits().caseTokens().ifPresent(v -> limits.put("case_tokens", v));
        p.limits().caseCostUsd().ifPresent(v -> limits.put("case_cost_usd", Pricing.text(v)));
        if (p.epochs().count() > 1) {
            ObjectNode epochs = root.putObject("epochs");
            epochs.put("count", p.epochs().count());
            epochs.put("reducer", p.epochs().reducer().toString());
        }
        if (p.confidence() != Profile.DEFAULT_CONFIDENCE) {
            root.put("confidence", p.confidence());
        }
        if (!p.pricing().isEmpty()) {
            // Model order and decimal spelling are normalised: 0.150 and 0.15 are one price, one profile.
            ObjectNode pricing = root.putObject("pricing");
            p.pricing().prices().forEach((model, price) -> {
                ObjectNode m = pricing.putObject(model);
                m.put("input", Pricing.text(price.input()));
                m.put("output", Pricing.text(price.output()));
                if (price.cachedInput().compareTo(price.input()) != 0) {
                    m.put("cached_input", Pricing.text(price.cachedInput()));
                }
            });
        }
        if (p.budget().present()) {
            // Written only with a budget: every profile without one keeps its canonical bytes and identity.
            ObjectNode budget = root.putObject("budget");
            p.budget().maxCostUsd().ifPresent(v -> budget.put("max_cost_usd", Pricing.text(v)));
            p.budget().maxTokens().ifPresent(v -> budget.put("max_tokens", v));
        }
        if (p.sandbox().kind() != Profile.SandboxKind.NONE) {
            // Written only with a sandbox: every profile without one keeps its identity.
            Profile.Sandbox s = p.sandbox();
            ObjectNode sandbox = root.putObject("sandbox");
            sandbox.put("kind", s.kind().wire());
            sandbox.put("network", s.network());
            s.workdir().ifPresent(w -> sandbox.put("workdir", w));
            s.memoryMb().ifPresent(m -> sandbox.put("memory_mb", m));
            s.pids().ifPresent(n -> sandbox.put("pids", n));
            if (!s.keepFiles().isEmpty()) {
                strings(sandbox.putArray("keep_files"), s.keepFiles());
            }
            s.image().ifPresent(i -> sandbox.put("image", i));
        }
        return root;
    }

    static ObjectNode evaluator(Profile.Evaluator e) {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("name", e.name());
        n.put("kind", e.kind().wire());
        n.setAll((ObjectNode) e.parameters());
        e.appliesTo().ifPresent(s -> selector(n.putObject("applies_to"), s));
        return n;
    }

    static void selector(ObjectNode n, Profile.Selector s) {
        if (!s.groups().isEmpty()) {
            strings(n.putArray("groups"), s.groups());
        }
        if (!s.tagsAll().isEmpty()) {
            strings(n.putArray("tags_all"), s.tagsAll());
        }
        if (!s.tagsAny().isEmpty()) {
            strings(n.putArray("tags_any"), s.tagsAny());
        }
    }

    static void strings(ArrayNode a, List<String> values) {
        values.forEach(a::add);
    }

    static byte[] encode(Profile p) {
        return bytes(tree(p));
    }

    static Sha256 sha256(Profile p) {
        return Sha256.of(encode(p));
    }

    static byte[] bytes(JsonNode n) {
        try {
            return MAPPER.writeValueAsBytes(n);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
