package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Set;

/**
 * The coordinator's in-memory upgrades of pre-identity events (migrateLegacySteeringEvent,
 * migrateLegacyMessageEvent): a {@code steering/message} becomes a {@code user/message}, and message events stored
 * before messages had identities get the wrapper shape with the id {@code legacy-message:<session>:<seq>}. The
 * upgraded event is what gets validated, folded and reported; the stored bytes are unchanged. Current-looking
 * malformed events are left alone so validation rejects them. (Legacy turn/start and turn/end shapes are only
 * checked, in {@link EventRules}: their upgrades change nothing the reader reports.)
 */
final class LegacyUpgrade {
    private LegacyUpgrade() {}

    /** @return {@code e} upgraded, or {@code e} itself when it has no legacy shape */
    static JsonNode apply(JsonNode e, String sessionId, SurfaceFold surface, Where at) {
        if (!e.isObject()) {
            return e;
        }
        JsonNode out = steering(e, sessionId, at);
        return message(out, sessionId, surface);
    }

    private static String legacyId(String sessionId, JsonNode e) {
        return "legacy-message:" + sessionId + ":" + e.get("seq").asText();
    }

    private static JsonNode steering(JsonNode e, String sessionId, Where at) {
        if (!"steering/message".equals(e.path("type").textValue())) {
            return e;
        }
        JsonNode data = e.get("data");
        CorruptSessionLogException malformed = new CorruptSessionLogException(
                "invalid stored event at seq " + e.get("seq") + " (" + at
                        + "): malformed pre-react-loop steering/message",
                at.offset());
        if (data == null || !data.isObject()) {
            throw malformed;
        }
        JsonNode wrapped = data.get("message");
        ObjectNode out = ((ObjectNode) e).deepCopy();
        out.put("type", "user/message");
        if (wrapped != null
                && wrapped.isObject()
                && Json.isSafeInteger(data.get("turn"))
                && onlyKeys(data, Set.of("turn", "message"), Set.of("turn", "message"))) {
            out.set("data", wrapped);
            return out;
        }
        if (!Json.isSafeInteger(data.get("turn"))
                || !onlyKeys(data, Set.of("turn", "content", "source"), Set.of("turn", "content", "source"))) {
            throw malformed;
        }
        ObjectNode d = ((ObjectNode) data).deepCopy();
        d.remove("turn");
        d.put("id", legacyId(sessionId, e)).put("role", "user");
        out.set("data", d);
        return out;
    }

    private static JsonNode message(JsonNode e, String sessionId, SurfaceFold surface) {
        JsonNode data = e.get("data");
        if (data == null || !data.isObject()) {
            return e;
        }
        String type = e.path("type").textValue();
        if (type == null) {
            return e;
        }
        ObjectNode out;
        switch (type) {
            case "user/message" -> {
                if (data.has("id")
                        || data.has("role")
                        || data.has("message")
                        || !data.has("content")
                        || !data.has("source")) {
                    return e;
                }
                out = ((ObjectNode) e).deepCopy();
                ((ObjectNode) out.get("data")).put("id", legacyId(sessionId, e)).put("role", "user");
            }
            case "assistant/message" -> {
                if (data.has("message") || !data.has("content") || !data.has("provenance")) {
                    return e;
                }
                out = ((ObjectNode) e).deepCopy();
                ObjectNode d = (ObjectNode) out.get("data");
                JsonNode content = d.remove("content"), provenance = d.remove("provenance");
                ObjectNode m = d.putObject("message");
                m.put("id", legacyId(sessionId, e)).put("role", "assistant").set("content", content);
                ObjectNode source = m.putObject("source");
                if (provenance.isObject()) {
                    source.setAll((ObjectNode) provenance); // {...asRecord(provenance), kind: "model"}
                }
                source.put("kind", "model");
            }
            case "tool/result" -> {
                if (data.has("message") || !data.has("callId") || !data.has("content") || !data.has("isError")) {
                    return e;
                }
                out = ((ObjectNode) e).deepCopy();
                ObjectNode d = (ObjectNode) out.get("data");
                JsonNode callId = d.remove("callId"), content = d.remove("content"), isError = d.remove("isError");
                ObjectNode m = d.putObject("message");
                String id = legacyId(sessionId, e);
                JsonNode op = e.get("surfaceOp");
                if (op != null
                        && op.isObject()
                        && "replace".equals(op.path("op").textValue())
                        && op.path("start").isNumber()) {
                    // the rewrite inherits its target's message id; a target that is not a current tool/result is
                    // rejected by the surface fold whatever the id is, so only those ids are kept
                    id = Json.isSafeInteger(op.get("start"))
                            ? surface.toolResultMessageId(Json.safeLong(op.get("start")))
                            : null;
                    if (id == null) {
                        id = "legacy-unresolved";
                    }
                }
                m.put("id", id).put("role", "user");
                ObjectNode block = m.putArray("content").addObject();
                block.put("type", "tool-result").set("toolCallId", callId);
                block.set("content", content);
                block.set("isError", isError);
                m.putObject("source").put("kind", "tool").set("callId", callId);
            }
            default -> {
                return e;
            }
        }
        return out;
    }

    private static boolean onlyKeys(JsonNode n, Set<String> required, Set<String> allowed) {
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            if (!allowed.contains(it.next())) {
                return false;
            }
        }
        for (String k : required) {
            if (!n.has(k)) {
                return false;
            }
        }
        return true;
    }
}
