package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * The published writer's packChunkRuns: within one batch, every run of at least {@link #MIN_RUN} consecutive
 * whitelisted same-kind, same-block assistant/chunk delta events becomes one storage row ({@code text-chunks},
 * {@code reasoning-chunks} or {@code tool-call-chunks}); every other event passes through verbatim, in order.
 * Rows have the official key order, so serialized batches are byte-identical to the official writer's.
 */
final class ChunkPacker {
    /** The format constant of the published encoder: shorter runs are stored as plain events. */
    static final int MIN_RUN = 3;

    private ChunkPacker() {}

    /** @return the storage records for {@code events} (events with their final seqs), in log order */
    static List<ObjectNode> pack(List<ObjectNode> events) {
        List<ObjectNode> out = new ArrayList<>(events.size());
        List<ObjectNode> run = new ArrayList<>();
        String kind = null;
        for (ObjectNode e : events) {
            String k = classify(e);
            if (k == null) {
                flush(kind, run, out);
                kind = null;
                out.add(e);
                continue;
            }
            if (k.equals(kind) && !run.isEmpty() && continues(run.get(run.size() - 1), e, k)) {
                run.add(e);
                continue;
            }
            flush(kind, run, out);
            kind = k;
            run.add(e);
        }
        flush(kind, run, out);
        return out;
    }

    private static void flush(String kind, List<ObjectNode> run, List<ObjectNode> out) {
        if (kind != null && run.size() >= MIN_RUN) {
            out.add(row(kind, run));
        } else {
            out.addAll(run);
        }
        run.clear();
    }

    /**
     * classify: the delta kind when the whole shape (envelope, data, chunk: exact keys, primitive types, integer
     * seq/time) is whitelisted, else null (stored verbatim, so unknown fields are never lost).
     */
    static String classify(JsonNode e) {
        if (!"assistant/chunk".equals(e.path("type").textValue())
                || !EventRules.exactKeys(e, "type", "seq", "time", "data")) {
            return null;
        }
        if (!EventRules.isEventSeq(e.get("seq")) || !Json.isSafeInteger(e.get("time"))) {
            return null;
        }
        JsonNode data = e.get("data");
        if (!data.isObject() || !EventRules.exactKeys(data, "turn", "step", "chunk")) {
            return null;
        }
        if (!data.get("turn").isNumber() || !data.get("step").isNumber()) {
            return null;
        }
        JsonNode chunk = data.get("chunk");
        if (!chunk.isObject() || !chunk.path("index").isNumber()) {
            return null;
        }
        String type = chunk.path("type").textValue();
        if (type == null) {
            return null;
        }
        return switch (type) {
            case "text-delta", "reasoning-delta" ->
                EventRules.exactKeys(chunk, "type", "index", "text")
                                && chunk.get("text").isTextual()
                        ? type
                        : null;
            case "tool-call-delta" ->
                (EventRules.exactKeys(chunk, "type", "index", "id", "argumentsDelta")
                                        || (EventRules.exactKeys(chunk, "type", "index", "id", "name", "argumentsDelta")
                                                && chunk.get("name").isTextual()))
                                && chunk.get("id").isTextual()
                                && chunk.get("argumentsDelta").isTextual()
                        ? type
                        : null;
            default -> null;
        };
    }

    /** continues: next seq, safe time gap, same turn/step/block and, for tool calls, the same id and name. */
    private static boolean continues(ObjectNode prev, ObjectNode next, String kind) {
        if (Json.safeLong(next.get("seq")) != Json.safeLong(prev.get("seq")) + 1) {
            return false;
        }
        if (Math.abs(Json.safeLong(next.get("time")) - Json.safeLong(prev.get("time"))) > Json.MAX_SAFE) {
            return false;
        }
        JsonNode a = prev.get("data"), b = next.get("data");
        if (!sameNumber(a.get("turn"), b.get("turn")) || !sameNumber(a.get("step"), b.get("step"))) {
            return false;
        }
        JsonNode ca = a.get("chunk"), cb = b.get("chunk");
        if (!sameNumber(ca.get("index"), cb.get("index"))) {
            return false;
        }
        if (!kind.equals("tool-call-delta")) {
            return true;
        }
        return ca.get("id").textValue().equals(cb.get("id").textValue())
                && ca.has("name") == cb.has("name")
                && (!ca.has("name")
                        || ca.get("name").textValue().equals(cb.get("name").textValue()));
    }

    /** JavaScript {@code ===} on two numbers (JSON.parse yields doubles). */
    private static boolean sameNumber(JsonNode a, JsonNode b) {
        return a.doubleValue() == b.doubleValue();
    }

    /** buildRow: the envelope {type, seq0, time0, data} with turn, step, index, dt and the member payloads. */
    private static ObjectNode row(String kind, List<ObjectNode> run) {
        ObjectNode first = run.get(0);
        JsonNode fd = first.get("data"), fc = fd.get("chunk");
        ObjectNode row = Json.MAPPER.createObjectNode();
        row.put(
                "type",
                switch (kind) {
                    case "text-delta" -> "text-chunks";
                    case "reasoning-delta" -> "reasoning-chunks";
                    default -> "tool-call-chunks";
                });
        row.set("seq0", first.get("seq"));
        row.set("time0", first.get("time"));
        ObjectNode data = row.putObject("data");
        data.set("turn", fd.get("turn"));
        data.set("step", fd.get("step"));
        data.set("index", fc.get("index"));
        ArrayNode dt = data.putArray("dt");
        for (int i = 1; i < run.size(); i++) {
            dt.add(Json.safeLong(run.get(i).get("time"))
                    - Json.safeLong(run.get(i - 1).get("time")));
        }
        boolean tool = kind.equals("tool-call-delta");
        if (tool) {
            data.set("id", fc.get("id"));
            if (fc.has("name")) {
                data.set("name", fc.get("name"));
            }
        }
        ArrayNode payload = data.putArray(tool ? "args" : "texts");
        for (ObjectNode e : run) {
            payload.add(e.get("data").get("chunk").get(tool ? "argumentsDelta" : "text"));
        }
        return row;
    }
}
