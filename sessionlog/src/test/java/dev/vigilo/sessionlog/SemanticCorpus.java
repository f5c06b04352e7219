package dev.vigilo.sessionlog;

import static dev.vigilo.sessionlog.LogBuilder.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Differential cases for the semantic rules Session.fromRestore applies when it rebuilds a session (surface
 * replace ranges, provenance, tool/result rewrites, request/header details), plus seeded content-level mutations
 * (fields of events altered or swapped) of a log that already contains valid replacements.
 */
final class SemanticCorpus {
    private static final Set<String> SURFACE = Set.of("user/message", "assistant/message", "tool/result");

    private SemanticCorpus() {}

    /** The first step of turn 1: seqs 0 turn/start, 1 user, 2 step/start, 3 assistant (one call), 4 tool/call, 5 tool/result. */
    private static final class Prefix {
        final Events e = new Events(31, 0);
        final String call;

        Prefix() {
            e.turnStart(1).user(1, "hi").stepStart(1, 1);
            call = e.assistant(1, 1, 1, "calling").get(0);
            long cs = e.toolCall(1, 1, call);
            e.toolResult(1, 1, call, cs, "full output");
        }
    }

    private static byte[] log(Consumer<Prefix> middle) {
        Prefix p = new Prefix();
        middle.accept(p);
        p.e.stepEnd(1, 1).turnEnd(1);
        return concat(frames(header(), batch(p.e.rows(), 4, 3)));
    }

    private static String userData(String id) {
        return "{\"id\":\"" + id
                + "\",\"role\":\"user\",\"source\":{\"kind\":\"user\"},\"content\":[{\"type\":\"text\",\"text\":\"summary\"}]}";
    }

    private static String assistantData(String id) {
        return "{\"turn\":1,\"step\":1,\"message\":{\"id\":\"" + id
                + "\",\"role\":\"assistant\",\"source\":{\"kind\":\"model\",\"provider\":\"deepseek\",\"model\":\"m\"},\"content\":[]}}";
    }

    private static String replace(long start, long end, String sources) {
        return "\"surfaceOp\":{\"op\":\"replace\",\"start\":" + start + ",\"end\":" + end + "}"
                + (sources == null ? "" : ",\"sourceEventSeqs\":" + sources);
    }

    private static String requestHeader(String config, String adapterDefaults) {
        return "{\"header\":{\"config\":{\"provider\":\"deepseek\",\"model\":\"m\"" + config + "}"
                + (adapterDefaults == null ? "" : ",\"adapterDefaults\":" + adapterDefaults) + "}}";
    }

    /** Named cases; each rule has at least one case the referee ACCEPTs and one it REJECTs. */
    static Map<String, byte[]> shapes() {
        Map<String, byte[]> m = new LinkedHashMap<>();
        // surfaceOp replace shape
        m.put("sem-replace-range", log(p -> p.e.with("user/message", userData("c1"), replace(1, 3, "[1,3]"))));
        m.put(
                "sem-replace-whole-surface",
                log(p -> p.e.with("user/message", userData("c1"), replace(1, 5, "[1,3,5]"))));
        m.put(
                "sem-replace-extra-key",
                log(p -> p.e.with(
                        "user/message",
                        userData("c1"),
                        "\"surfaceOp\":{\"op\":\"replace\",\"start\":1,\"end\":3,\"x\":0},\"sourceEventSeqs\":[1,3]")));
        m.put(
                "sem-replace-negative-start",
                log(p -> p.e.with("user/message", userData("c1"), replace(-1, 3, "[1,3]"))));
        // replace range against the current surface
        m.put(
                "sem-replace-start-not-in-surface",
                log(p -> p.e.with("user/message", userData("c1"), replace(2, 3, "[2,3]"))));
        m.put(
                "sem-replace-end-not-in-surface",
                log(p -> p.e.with("user/message", userData("c1"), replace(1, 4, "[1,3,4]"))));
        m.put(
                "sem-replace-start-after-end",
                log(p -> p.e.with("user/message", userData("c1"), replace(5, 1, "[1,3,5]"))));
        m.put(
                "sem-replace-shadowed-node",
                log(p -> p.e.with("user/message", userData("c1"), replace(1, 3, "[1,3]"))
                        .with("assistant/message", assistantData("c2"), replace(1, 1, "[1]"))));
        m.put(
                "sem-replace-the-replacement",
                log(p -> p.e.with("user/message", userData("c1"), replace(1, 3, "[1,3]"))
                        .with("assistant/message", assistantData("c2"), replace(6, 6, "[6]"))));
        // provenance: sourceEventSeqs
        m.put("sem-sources-miss-shadowed", log(p -> p.e.with("user/message", userData("c1"), replace(1, 3, "[1]"))));
        m.put(
                "sem-sources-extra-earlier",
                log(p -> p.e.with("user/message", userData("c1"), replace(1, 3, "[0,1,2,3]"))));
        m.put(
                "sem-sources-not-array",
                log(p -> p.e.with("user/message", userData("c1"), "\"surfaceOp\":\"append\",\"sourceEventSeqs\":5")));
        m.put(
                "sem-sources-empty-user",
                log(p -> p.e.with("user/message", userData("c1"), "\"surfaceOp\":\"append\",\"sourceEventSeqs\":[]")));
        m.put(
                "sem-sources-empty-assistant",
                log(p -> p.e.with(
                        "assistant/message", assistantData("c1"), "\"surfaceOp\":\"append\",\"sourceEventSeqs\":[]")));
        m.put(
                "sem-sources-duplicate",
                log(p -> p.e.with(
                        "user/message", userData("c1"), "\"surfaceOp\":\"append\",\"sourceEventSeqs\":[1,1]")));
        m.put(
                "sem-sources-self",
                log(p -> p.e.with("user/message", userData("c1"), "\"surfaceOp\":\"append\",\"sourceEventSeqs\":[6]")));
        m.put(
                "sem-sources-fraction",
                log(p -> p.e.with(
                        "user/message", userData("c1"), "\"surfaceOp\":\"append\",\"sourceEventSeqs\":[1.5]")));
        m.put(
                "sem-sources-integral-float",
                log(p -> p.e.with(
                        "user/message", userData("c1"), "\"surfaceOp\":\"append\",\"sourceEventSeqs\":[1.0,2]")));
        m.put(
                "sem-sources-on-non-surface",
                log(p -> p.e.with("todo/write", "{\"todos\":[]}", "\"sourceEventSeqs\":[1]")));
        m.put(
                "sem-sources-null-on-non-surface",
                log(p -> p.e.with("todo/write", "{\"todos\":[]}", "\"sourceEventSeqs\":null")));
        // tool/result rewrites
        m.put(
                "sem-toolresult-rewrite-content",
                log(p ->
                        p.e.with("tool/result", Events.toolResultData(1, 1, p.call, "short"), replace(5, 5, "[4,5]"))));
        m.put(
                "sem-toolresult-rewrite-reordered-keys",
                log(p -> p.e.with(
                        "tool/result",
                        Events.toolResultData(1, 1, p.call, "short")
                                .replace("{\"turn\":1,\"step\":1,", "{\"step\":1.0,\"turn\":1,"),
                        replace(5, 5, "[5]"))));
        m.put(
                "sem-toolresult-rewrite-changes-turn",
                log(p -> p.e.with("tool/result", Events.toolResultData(2, 1, p.call, "short"), replace(5, 5, "[5]"))));
        m.put(
                "sem-toolresult-rewrite-changes-message-id",
                log(p -> p.e.with(
                        "tool/result",
                        Events.toolResultData(1, 1, p.call, "short").replace("\"msg-t-", "\"msg-x-"),
                        replace(5, 5, "[5]"))));
        m.put(
                "sem-toolresult-rewrite-two-nodes",
                log(p ->
                        p.e.with("tool/result", Events.toolResultData(1, 1, p.call, "short"), replace(3, 5, "[3,5]"))));
        m.put(
                "sem-toolresult-rewrite-targets-user",
                log(p -> p.e.with("tool/result", Events.toolResultData(1, 1, p.call, "short"), replace(1, 1, "[1]"))));
        m.put(
                "sem-toolresult-rewrite-twice",
                log(p -> p.e.with("tool/result", Events.toolResultData(1, 1, p.call, "short"), replace(5, 5, "[5]"))
                        .with("tool/result", Events.toolResultData(1, 1, p.call, "shorter"), replace(6, 6, "[6]"))));
        m.put(
                "sem-user-replaces-toolresult-then-rewrite",
                log(p -> p.e.with("user/message", userData("c1"), replace(5, 5, "[5]"))
                        .with("tool/result", Events.toolResultData(1, 1, p.call, "short"), replace(6, 6, "[6]"))));
        // request/header details
        m.put(
                "sem-request-header-effort-defaults",
                log(p -> p.e.add(
                        "request/header",
                        requestHeader(
                                ",\"reasoningEffort\":\"high\",\"maxTokens\":100",
                                "{\"reasoningEffort\":true,\"maxTokens\":true}"))));
        m.put(
                "sem-request-header-empty-effort",
                log(p -> p.e.add("request/header", requestHeader(",\"reasoningEffort\":\"\"", null))));
        m.put(
                "sem-request-header-effort-not-string",
                log(p -> p.e.add("request/header", requestHeader(",\"reasoningEffort\":3", null))));
        m.put(
                "sem-request-header-defaults-unbacked",
                log(p -> p.e.add("request/header", requestHeader("", "{\"maxTokens\":true}"))));
        m.put(
                "sem-request-header-defaults-false",
                log(p -> p.e.add("request/header", requestHeader(",\"maxTokens\":5", "{\"maxTokens\":false}"))));
        m.put(
                "sem-request-header-defaults-unknown-key",
                log(p -> p.e.add("request/header", requestHeader("", "{\"temperature\":true}"))));
        m.put("sem-request-header-defaults-array", log(p -> p.e.add("request/header", requestHeader("", "[]"))));
        m.put("sem-request-header-defaults-empty", log(p -> p.e.add("request/header", requestHeader("", "{}"))));
        // pre-identity shapes the coordinator upgrades before validating (legacy user/assistant/tool messages,
        // steering)
        m.put(
                "legacy-user-message",
                log(p -> p.e.with(
                        "user/message",
                        "{\"content\":[{\"type\":\"text\",\"text\":\"old\"}],\"source\":{\"kind\":\"user\"}}",
                        "\"surfaceOp\":\"append\"")));
        m.put(
                "legacy-user-message-bad-source",
                log(p -> p.e.with("user/message", "{\"content\":[],\"source\":{}}", "\"surfaceOp\":\"append\"")));
        m.put(
                "legacy-assistant-message",
                log(p -> p.e.with(
                        "assistant/message",
                        "{\"turn\":1,\"step\":1,\"content\":[{\"type\":\"text\",\"text\":\"old\"}],\"provenance\":{\"provider\":\"deepseek\",\"model\":\"m\"}}",
                        "\"surfaceOp\":\"append\"")));
        m.put(
                "legacy-assistant-message-no-model",
                log(p -> p.e.with(
                        "assistant/message",
                        "{\"turn\":1,\"step\":1,\"content\":[],\"provenance\":{\"provider\":\"deepseek\"}}",
                        "\"surfaceOp\":\"append\"")));
        m.put(
                "legacy-tool-result",
                log(p -> p.e.with(
                        "tool/result",
                        legacyToolResult(p.call, "old", false),
                        "\"surfaceOp\":\"append\",\"sourceEventSeqs\":[4]")));
        m.put(
                "legacy-tool-result-bad-content",
                log(p -> p.e.with(
                        "tool/result",
                        legacyToolResult(p.call, "old", false)
                                .replace("\"content\":[", "\"content\":{\"x\":[")
                                .replace("],\"isError", "]},\"isError"),
                        "\"surfaceOp\":\"append\"")));
        m.put(
                "legacy-tool-result-rewrite",
                log(p -> p.e.with("tool/result", legacyToolResult(p.call, "old", false), "\"surfaceOp\":\"append\"")
                        .with("tool/result", legacyToolResult(p.call, "new", false), replace(6, 6, "[6]"))));
        m.put(
                "legacy-tool-result-rewrite-changes-isError",
                log(p -> p.e.with("tool/result", legacyToolResult(p.call, "old", false), "\"surfaceOp\":\"append\"")
                        .with("tool/result", legacyToolResult(p.call, "new", true), replace(6, 6, "[6]"))));
        m.put(
                "legacy-tool-result-rewrite-of-current-shape",
                log(p -> p.e.with("tool/result", legacyToolResult(p.call, "new", false), replace(5, 5, "[5]"))));
        m.put(
                "legacy-tool-result-rewrite-of-user",
                log(p -> p.e.with("tool/result", legacyToolResult(p.call, "new", false), replace(1, 1, "[1]"))));
        m.put(
                "steering-wrapped",
                log(p -> p.e.with(
                        "steering/message",
                        "{\"turn\":1,\"message\":" + userData("s1") + "}",
                        "\"surfaceOp\":\"append\"")));
        m.put(
                "steering-flat",
                log(p -> p.e.with(
                        "steering/message",
                        "{\"turn\":1,\"content\":[],\"source\":{\"kind\":\"user\"}}",
                        "\"surfaceOp\":\"append\"")));
        m.put(
                "steering-malformed",
                log(p -> p.e.with("steering/message", "{\"turn\":1,\"content\":[]}", "\"surfaceOp\":\"append\"")));
        m.put("steering-not-object", log(p -> p.e.with("steering/message", "\"hi\"", "\"surfaceOp\":\"append\"")));
        // legacy turn/end error reasons
        m.put("turn-end-error-message", turnEnd("{\"kind\":\"error\",\"step\":0,\"message\":\"boom\"}"));
        m.put(
                "turn-end-error-message-code",
                turnEnd("{\"kind\":\"error\",\"step\":1,\"message\":\"boom\",\"code\":\"E1\"}"));
        m.put(
                "turn-end-error-code-not-string",
                turnEnd("{\"kind\":\"error\",\"step\":1,\"message\":\"boom\",\"code\":5}"));
        m.put("turn-end-error-negative-step", turnEnd("{\"kind\":\"error\",\"step\":-1,\"message\":\"boom\"}"));
        m.put(
                "turn-end-error-failure",
                turnEnd(
                        "{\"kind\":\"error\",\"step\":1,\"failure\":{\"message\":\"m\",\"code\":\"c\",\"status\":500}}"));
        m.put(
                "turn-end-error-failure-extra-key",
                turnEnd("{\"kind\":\"error\",\"step\":1,\"failure\":{\"message\":\"m\",\"code\":\"c\",\"x\":1}}"));
        m.put("turn-end-error-current", turnEnd("{\"kind\":\"error\",\"error\":{\"message\":\"m\",\"code\":\"c\"}}"));
        m.put("turn-end-error-bare", turnEnd("{\"kind\":\"error\"}"));
        return m;
    }

    private static String legacyToolResult(String call, String text, boolean isError) {
        return "{\"turn\":1,\"step\":1,\"callId\":\"" + call + "\",\"content\":[{\"type\":\"text\",\"text\":\"" + text
                + "\"}],\"isError\":" + isError + "}";
    }

    private static byte[] turnEnd(String reason) {
        Prefix p = new Prefix();
        p.e.stepEnd(1, 1).add("turn/end", "{\"turn\":1,\"reason\":" + reason + "}");
        return concat(frames(header(), batch(p.e.rows(), 4, 3)));
    }

    /** Valid rows that already contain surface replacements, then two more turns (the second with packed rows). */
    static List<String> richRows() {
        Prefix p = new Prefix();
        p.e.with("user/message", userData("c1"), replace(1, 3, "[1,3]"))
                .with("tool/result", Events.toolResultData(1, 1, p.call, "short"), replace(5, 5, "[5]"))
                .with("assistant/message", assistantData("c2"), "\"surfaceOp\":\"append\",\"sourceEventSeqs\":[]")
                .stepEnd(1, 1)
                .turnEnd(1);
        List<String> rows = new ArrayList<>(p.e.rows());
        Events more = new Events(32, p.e.seq);
        more.turn(2, false).turn(3, true);
        rows.addAll(more.rows());
        return rows;
    }

    /** Seeded content-level mutations of {@link #richRows()}: swapped/altered fields, re-framed. */
    static Map<String, byte[]> mutations(long[] seeds) {
        List<String> base = richRows();
        Map<String, byte[]> m = new LinkedHashMap<>();
        for (long seed : seeds) {
            Random r = new Random(seed * 0x2545F4914F6CDD1DL + 5);
            List<JsonNode> rows = new ArrayList<>();
            for (String s : base) {
                rows.add(Json.parseLine(s.getBytes(), 0, s.length()));
            }
            List<Integer> events = new ArrayList<>(), surface = new ArrayList<>();
            for (int i = 0; i < rows.size(); i++) {
                if (!rows.get(i).has("seq")) {
                    continue; // packed rows are mutated by the byte-level generator
                }
                events.add(i);
                if (SURFACE.contains(rows.get(i).get("type").textValue())) {
                    surface.add(i);
                }
            }
            int kind = r.nextInt(7);
            ObjectNode a = (ObjectNode) rows.get(events.get(r.nextInt(events.size())));
            ObjectNode b = (ObjectNode) rows.get(events.get(r.nextInt(events.size())));
            int sPos = 1 + r.nextInt(surface.size() - 1);
            ObjectNode s = (ObjectNode) rows.get(surface.get(sPos));
            switch (kind) {
                case 0 -> { // swap the data of two events
                    JsonNode d = a.get("data");
                    a.set("data", b.get("data"));
                    b.set("data", d);
                }
                case 1 -> { // swap the types of two surface events (keeps the envelope valid more often)
                    ObjectNode t = (ObjectNode) rows.get(surface.get(r.nextInt(surface.size())));
                    JsonNode ty = s.get("type");
                    s.set("type", t.get("type"));
                    t.set("type", ty);
                }
                case 2 -> { // turn a surface event into a replacement of an earlier range, citing the events in between
                    int si = sPos;
                    int j = r.nextInt(si), k = j + r.nextInt(si - j);
                    ObjectNode op = s.putObject("surfaceOp");
                    op.put("op", "replace")
                            .put("start", rows.get(surface.get(j)).get("seq").longValue())
                            .put("end", rows.get(surface.get(k)).get("seq").longValue());
                    ArrayNode src = s.putArray("sourceEventSeqs");
                    for (int x = j; x <= k; x++) {
                        if (x != k || r.nextInt(4) > 0) {
                            src.add(rows.get(surface.get(x)).get("seq").longValue());
                        }
                    }
                }
                case 3 -> { // alter sourceEventSeqs
                    long seq = s.get("seq").longValue();
                    ArrayNode src = s.putArray("sourceEventSeqs");
                    switch (r.nextInt(4)) {
                        case 0 -> src.add(r.nextInt((int) seq + 2));
                        case 1 -> src.add(seq - 1).add(seq - 1);
                        case 2 -> src.add(r.nextInt((int) seq)).add(r.nextInt((int) seq));
                        default -> {}
                    }
                }
                case 4 -> { // alter one scalar inside data (turn/step, an id, a text)
                    alterScalar(s.get("data"), r);
                }
                case 6 -> toLegacyShape(s, r); // a pre-identity message shape (upgraded by the coordinator)
                default -> { // drop a key from data, or the surface metadata
                    String[] keys = {"surfaceOp", "sourceEventSeqs", "data"};
                    String key = keys[r.nextInt(keys.length)];
                    if (key.equals("data")
                            && a.get("data").isObject()
                            && a.get("data").size() > 0) {
                        Iterator<String> it = a.get("data").fieldNames();
                        String first = it.next();
                        ((ObjectNode) a.get("data")).remove(first);
                    } else {
                        s.remove(key);
                    }
                }
            }
            List<String> out = new ArrayList<>();
            for (JsonNode n : rows) {
                out.add(n.toString());
            }
            String[] names = {
                "swap-data", "swap-types", "replace-range", "sources", "alter-scalar", "drop-key", "legacy-shape"
            };
            m.put("content-" + seed + "-" + names[kind], concat(frames(header(), batch(out, 7, 13, 5, 20))));
        }
        return m;
    }

    /** Rewrites a message event's data into the shape stored before messages had identities. */
    private static void toLegacyShape(ObjectNode e, Random r) {
        if (!e.get("data").isObject()) {
            return;
        }
        ObjectNode d = (ObjectNode) e.get("data");
        switch (e.get("type").textValue()) {
            case "user/message" -> {
                d.remove("id");
                d.remove("role");
            }
            case "assistant/message" -> {
                JsonNode msg = d.remove("message");
                if (msg == null) {
                    return;
                }
                d.set("content", msg.get("content"));
                ObjectNode prov = ((ObjectNode) msg.get("source")).deepCopy();
                prov.remove("kind");
                d.set("provenance", prov);
            }
            default -> {
                JsonNode msg = d.remove("message");
                if (msg == null) {
                    return;
                }
                d.set("callId", msg.get("source").get("callId"));
                d.set("content", msg.get("content").get(0).get("content"));
                d.put("isError", r.nextInt(3) == 0);
            }
        }
    }

    private static void alterScalar(JsonNode data, Random r) {
        List<ObjectNode> parents = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        collect(data, parents, keys);
        if (parents.isEmpty()) {
            return;
        }
        int i = r.nextInt(parents.size());
        ObjectNode p = parents.get(i);
        JsonNode v = p.get(keys.get(i));
        if (v.isNumber()) {
            p.put(keys.get(i), v.longValue() + 1);
        } else {
            p.put(keys.get(i), v.asText() + "x");
        }
    }

    private static void collect(JsonNode n, List<ObjectNode> parents, List<String> keys) {
        if (n.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                if (f.getValue().isValueNode()) {
                    parents.add((ObjectNode) n);
                    keys.add(f.getKey());
                } else {
                    collect(f.getValue(), parents, keys);
                }
            }
        } else if (n.isArray()) {
            for (JsonNode c : n) {
                collect(c, parents, keys);
            }
        }
    }
}
