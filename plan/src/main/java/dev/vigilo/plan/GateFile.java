package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.storage.ObjectRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * One gate's frozen policy and planned counts, format {@code vigilo.plan.gate} (docs/formats/plan-gates.md). Gate
 * files form a chain in profile order: each links to the next, so the chain is written from tail to head and the
 * manifest references the head. Counts are sorted by shard and include a zero entry for every used shard. Immutable.
 *
 * <p>Versions: 1 says nothing of how the gate decides (on the point rate, intervals at 0.95); 2 adds {@code decide}
 * and {@code confidence}. A gate whose policy version 1 can say is written as version 1, byte for byte as before
 * version 2 existed, so a plan prepared from an older profile is the same plan; readers accept both.
 */
public record GateFile(
        UUID runId,
        int gateIndex,
        int gateCount,
        Profile.Gate gate,
        long selectedCases,
        List<ShardCount> shards,
        Optional<ObjectRef> next) {
    static final String FORMAT = "vigilo.plan.gate";
    /** The version that carries {@code decide} and {@code confidence}. */
    static final int VERSION_DECIDE = 2;

    public GateFile {
        shards = List.copyOf(shards);
    }

    /** The planned number of cases of one shard selected by the gate. */
    public record ShardCount(int shard, long count) {}

    byte[] encode() {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("format", FORMAT);
        n.put("version", gate.defaultPolicy() ? PlanLayout.FORMAT_VERSION : VERSION_DECIDE);
        n.put("run_id", runId.toString());
        n.put("gate_index", gateIndex);
        n.put("gate_count", gateCount);
        n.put("name", gate.name());
        ProfileJson.strings(n.putArray("required_evaluators"), gate.requiredEvaluators());
        ObjectNode sel = n.putObject("selector");
        ProfileJson.selector(sel, gate.selector());
        n.put("min_pass_rate", gate.minPassRate());
        if (!gate.defaultPolicy()) {
            n.put("decide", gate.decide().wire());
            n.put("confidence", gate.confidence());
        }
        n.put("selected_cases", selectedCases);
        ArrayNode a = n.putArray("shards");
        for (ShardCount s : shards) {
            a.addObject().put("shard", s.shard()).put("count", s.count());
        }
        if (next.isPresent()) {
            PlanJson.putRef(n.putObject("next"), next.get());
        } else {
            n.putNull("next");
        }
        return PlanJson.encode(n);
    }

    /** Decodes and checks position, sort order and that the shard counts sum to {@code selected_cases}. */
    static GateFile decode(byte[] bytes, UUID runId, int expectedIndex) {
        JsonNode n = PlanJson.decode(bytes, FORMAT, PlanLayout.FORMAT_VERSION, VERSION_DECIDE);
        boolean decides = PlanJson.num(n, "version") == VERSION_DECIDE;
        PlanJson.expect(runId.equals(PlanJson.uuid(n, "run_id")), "belongs to another run");
        int index = (int) PlanJson.num(n, "gate_index");
        int count = (int) PlanJson.num(n, "gate_count");
        PlanJson.expect(
                index == expectedIndex && count >= 1 && count <= Profile.MAX_GATES && index < count,
                "gate_index " + index + " is not the expected " + expectedIndex);
        String name = PlanJson.text(n, "name");
        List<String> required = new ArrayList<>();
        PlanJson.array(n, "required_evaluators").forEach(x -> required.add(x.asText()));
        JsonNode sel = n.get("selector");
        PlanJson.expect(sel != null && sel.isObject(), "selector is missing");
        Profile.Selector selector =
                new Profile.Selector(list(sel, "groups"), list(sel, "tags_all"), list(sel, "tags_any"));
        JsonNode rate = n.get("min_pass_rate");
        PlanJson.expect(rate != null && rate.isNumber(), "min_pass_rate is missing");
        Profile.Decide decide = Profile.Decide.POINT;
        double confidence = Profile.DEFAULT_CONFIDENCE;
        if (decides) {
            String rule = PlanJson.text(n, "decide");
            decide = Profile.Decide.fromWire(rule)
                    .orElseThrow(() -> new PlanJson.FormatException("decide \"" + rule + "\" is not point or bound"));
            JsonNode c = n.get("confidence");
            PlanJson.expect(
                    c != null
                            && c.isNumber()
                            && c.asDouble() >= Profile.MIN_CONFIDENCE
                            && c.asDouble() <= Profile.MAX_CONFIDENCE,
                    "confidence is missing or outside [0.5, 0.999]");
            confidence = c.asDouble();
        }
        long selected = PlanJson.num(n, "selected_cases");
        JsonNode a = PlanJson.array(n, "shards");
        List<ShardCount> shards = new ArrayList<>();
        long sum = 0;
        int prev = -1;
        for (JsonNode s : a) {
            ShardCount sc = new ShardCount((int) PlanJson.num(s, "shard"), PlanJson.num(s, "count"));
            PlanJson.expect(
                    sc.shard() > prev && sc.shard() < PlanShape.SHARDS && sc.count() >= 0,
                    "shard entries are not sorted, unique and in 0..127");
            prev = sc.shard();
            sum += sc.count();
            shards.add(sc);
        }
        PlanJson.expect(
                sum == selected && selected > 0, "shard counts sum to " + sum + ", selected_cases is " + selected);
        JsonNode next = n.get("next");
        Optional<ObjectRef> nextRef =
                next == null || next.isNull() ? Optional.empty() : Optional.of(PlanJson.ref(next));
        PlanJson.expect(nextRef.isPresent() == (index + 1 < count), "chain link does not match the gate's position");
        return new GateFile(
                runId,
                index,
                count,
                new Profile.Gate(name, required, selector, rate.asDouble(), decide, confidence),
                selected,
                shards,
                nextRef);
    }

    private static List<String> list(JsonNode n, String field) {
        List<String> out = new ArrayList<>();
        JsonNode a = n.get(field);
        if (a != null) {
            a.forEach(x -> out.add(x.asText()));
        }
        return out;
    }
}
