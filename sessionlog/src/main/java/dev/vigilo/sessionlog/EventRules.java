package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The published format's record rules: header checks, packed-row expansion, the event envelope, message
 * shapes, legacy refusals and the known-type vocabulary. Mirrors @deepseek-ai/dsh-session 0.1.0-rc.8.
 */
final class EventRules {
    static final Set<String> KNOWN_TYPES = Set.of(
            "agent-preset/selected",
            "agent/inbox/spliced",
            "approval/asked",
            "approval/decided",
            "approval/policy",
            "assistant/chunk",
            "assistant/message",
            "command/done",
            "command/run",
            "compaction/end",
            "compaction/prune",
            "compaction/start",
            "compaction/summary",
            "feedback/record",
            "goal/change",
            "hook/invoked",
            "hook/result",
            "llm/retry",
            "llm/retry-started",
            "permission/preset",
            "plan/mode",
            "request/context",
            "request/header",
            "sandbox/mode",
            "schedule/change",
            "session/end-seed",
            "session/title",
            "session/title-llm-request",
            "step/end",
            "step/start",
            "subagent/descriptor",
            "team/member",
            "team/message/delivered",
            "team/message/queued",
            "team/task",
            "todo/write",
            "tool-workflow/agent-end",
            "tool-workflow/agent-start",
            "tool-workflow/run-end",
            "tool-workflow/run-start",
            "tool/call",
            "tool/code-dispatch",
            "tool/code-dispatch-start",
            "tool/result",
            "turn/end",
            "turn/start",
            "user/message",
            "web/deepseek-search-llm-request");
    private static final Set<String> ENVELOPE =
            Set.of("type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable");
    private static final Set<String> SURFACE = Set.of("user/message", "assistant/message", "tool/result");

    /** Thrown for a malformed packed row; the scanner treats it like an unparsable line. */
    static final class MalformedRow extends Exception {
        MalformedRow(String m) {
            super(m, null, false, false);
        }
    }

    private EventRules() {}

    // ---------------------------------------------------------------- header

    /** Parses and checks frame 0's single line (without its newline). */
    static SessionHeader parseHeader(byte[] buf, int off, int len) {
        JsonNode v = Json.parseLine(buf, off, len);
        if (v == null) {
            throw new CorruptSessionLogException("corrupt session log: header line is not valid JSON", 0);
        }
        JsonNode version = v.isObject() ? v.get("version") : null;
        if (version != null && version.isNumber() && !Json.numberEquals(version, 0)) {
            throw new UnsupportedSessionFormatException(
                    "session log format version " + version
                            + " is not supported by this build (written by a newer writer?); upgrade Vigilo",
                    0);
        }
        if (!v.isObject()
                || !"session".equals(text(v, "type"))
                || version == null
                || !version.isNumber()
                || !v.path("id").isTextual()
                || !safeNonNeg(v.get("createdAt"))
                || !safeNonNeg(v.get("delegationDepth"))
                || negativeZero(buf, off, len, v, "createdAt")
                || negativeZero(buf, off, len, v, "delegationDepth")
                || (v.has("origin") && !"subagent".equals(text(v, "origin")))
                || (v.has("agentPreset") && !v.get("agentPreset").isTextual())) {
            throw new CorruptSessionLogException("corrupt session log: first line is not a session header", 0);
        }
        if (v.has("sandboxMode") || v.has("approvalPolicy")) {
            throw new CorruptSessionLogException(
                    "session header uses retired policy baseline fields (sandboxMode/approvalPolicy)", 0);
        }
        String id = v.get("id").textValue();
        if (id.isEmpty()) {
            throw new CorruptSessionLogException("session header id is empty and cannot name a storage path", 0);
        }
        String cwd = null;
        if (v.has("cwd")) {
            JsonNode c = v.get("cwd");
            if (!c.isTextual() || !c.textValue().startsWith("/")) {
                throw new CorruptSessionLogException("session header cwd must be an absolute path, got " + c, 0);
            }
            cwd = c.textValue();
        }
        if (v.has("parentSession") && !v.get("parentSession").isTextual()) {
            throw new CorruptSessionLogException("session header parentSession must be a string", 0);
        }
        if (v.has("seedLength") && !safeNonNeg(v.get("seedLength"))) {
            throw new CorruptSessionLogException("session header seedLength must be a non-negative safe integer", 0);
        }
        return new SessionHeader(id, cwd, Json.safeLong(v.get("createdAt")), Json.safeLong(v.get("delegationDepth")));
    }

    /**
     * isHeaderLine refuses {@code -0} (Object.is), which a parsed number cannot tell from 0: for a zero value, the
     * literal's own text decides (the last top-level occurrence, as JSON.parse keeps the last duplicate).
     */
    private static boolean negativeZero(byte[] buf, int off, int len, JsonNode v, String field) {
        JsonNode n = v.get(field);
        if (n == null || !n.isNumber() || n.doubleValue() != 0) {
            return false;
        }
        String text = null;
        try (com.fasterxml.jackson.core.JsonParser p = Json.MAPPER
                .getFactory()
                .createParser(new String(buf, off, len, java.nio.charset.StandardCharsets.UTF_8))) {
            if (p.nextToken() != com.fasterxml.jackson.core.JsonToken.START_OBJECT) {
                return false;
            }
            while (p.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                if (name.equals(field) && p.currentToken().isNumeric()) {
                    text = p.getText();
                }
                p.skipChildren();
            }
        } catch (java.io.IOException e) {
            return false;
        }
        return text != null && text.startsWith("-");
    }

    private static boolean safeNonNeg(JsonNode n) {
        return Json.isSafeInteger(n) && Json.safeLong(n) >= 0;
    }

    private static String text(JsonNode n, String field) {
        JsonNode f = n.get(field);
        return f != null && f.isTextual() ? f.textValue() : null;
    }

    // ---------------------------------------------------------------- packed rows

    /** decodeStorageRecord: a packed row expands to its members; any other value is one "event". */
    static List<JsonNode> decodeStorageRecord(JsonNode v) throws MalformedRow {
        if (!v.isObject()) {
            return List.of(v);
        }
        String tag = text(v, "type");
        if (!"text-chunks".equals(tag) && !"reasoning-chunks".equals(tag) && !"tool-call-chunks".equals(tag)) {
            return List.of(v);
        }
        if (!exactKeys(v, "type", "seq0", "time0", "data")) {
            throw new MalformedRow("envelope");
        }
        if (!Json.isSafeInteger(v.get("seq0")) || Json.safeLong(v.get("seq0")) < 0) {
            throw new MalformedRow("seq0");
        }
        if (!Json.isSafeInteger(v.get("time0"))) {
            throw new MalformedRow("time0");
        }
        JsonNode data = v.get("data");
        if (!data.isObject()) {
            throw new MalformedRow("data");
        }
        boolean tool = tag.equals("tool-call-chunks");
        boolean withName = false;
        if (tool) {
            withName = exactKeys(data, "turn", "step", "index", "id", "name", "dt", "args");
            if (!withName && !exactKeys(data, "turn", "step", "index", "id", "dt", "args")) {
                throw new MalformedRow("data keys");
            }
            if (!data.get("id").isTextual() || (withName && !data.get("name").isTextual())) {
                throw new MalformedRow("id/name");
            }
        } else if (!exactKeys(data, "turn", "step", "index", "dt", "texts")) {
            throw new MalformedRow("data keys");
        }
        if (!data.get("turn").isNumber()
                || !data.get("step").isNumber()
                || !data.get("index").isNumber()) {
            throw new MalformedRow("numbers");
        }
        JsonNode payload = data.get(tool ? "args" : "texts");
        if (!payload.isArray() || payload.isEmpty()) {
            throw new MalformedRow("payload");
        }
        for (JsonNode p : payload) {
            if (!p.isTextual()) {
                throw new MalformedRow("payload");
            }
        }
        JsonNode dt = data.get("dt");
        if (!dt.isArray()) {
            throw new MalformedRow("dt");
        }
        for (JsonNode g : dt) {
            if (!Json.isSafeInteger(g)) {
                throw new MalformedRow("dt");
            }
        }
        if (dt.size() != payload.size() - 1) {
            throw new MalformedRow("dt arity");
        }
        long seq0 = Json.safeLong(v.get("seq0"));
        if (seq0 + payload.size() - 1 > Json.MAX_SAFE) {
            throw new MalformedRow("seq range");
        }
        long time = Json.safeLong(v.get("time0"));
        List<JsonNode> out = new ArrayList<>(payload.size());
        for (int k = 0; k < payload.size(); k++) {
            if (k > 0) {
                time += Json.safeLong(dt.get(k - 1));
                if (Math.abs(time) > Json.MAX_SAFE) {
                    throw new MalformedRow("time range");
                }
            }
            ObjectNode chunk = Json.MAPPER.createObjectNode();
            switch (tag) {
                case "text-chunks" -> chunk.put("type", "text-delta").set("index", data.get("index"));
                case "reasoning-chunks" -> chunk.put("type", "reasoning-delta").set("index", data.get("index"));
                default -> {
                    chunk.put("type", "tool-call-delta").set("index", data.get("index"));
                    chunk.set("id", data.get("id"));
                    if (withName) {
                        chunk.set("name", data.get("name"));
                    }
                }
            }
            if (tool) {
                chunk.set("argumentsDelta", payload.get(k));
            } else {
                chunk.set("text", payload.get(k));
            }
            ObjectNode ev = Json.MAPPER.createObjectNode();
            ev.put("type", "assistant/chunk").put("seq", seq0 + k).put("time", time);
            ObjectNode d = ev.putObject("data");
            d.set("turn", data.get("turn"));
            d.set("step", data.get("step"));
            d.set("chunk", chunk);
            out.add(ev);
        }
        return out;
    }

    static boolean exactKeys(JsonNode n, String... keys) {
        if (n.size() != keys.length) {
            return false;
        }
        for (String k : keys) {
            if (!n.has(k)) {
                return false;
            }
        }
        return true;
    }

    private static boolean onlyKeys(JsonNode n, Set<String> allowed) {
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            if (!allowed.contains(it.next())) {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------- stored-event validation

    /**
     * The coordinator's and session's checks on one stored event: legacy refusals, envelope, message shapes,
     * surfaceOp, vocabulary. {@code at} is where the event was read (for the error).
     */
    static void validateStored(JsonNode e, Where at) {
        if (!e.isObject()) {
            throw bad("stored record is not a JSON object", e, at);
        }
        String type = text(e, "type");
        if ("request/header-delta".equals(type) || "mode/set".equals(type)) {
            throw bad("unsupported legacy " + type + " event", e, at);
        }
        JsonNode data = e.get("data");
        if ("request/header".equals(type)
                && data != null
                && data.isObject()
                && "fallback".equals(text(data, "reason"))) {
            throw bad("unsupported legacy request/header reason \"fallback\"", e, at);
        }
        if (!onlyKeys(e, ENVELOPE)
                || type == null
                || !Json.isSafeInteger(e.get("seq"))
                || Json.safeLong(e.get("seq")) < 0
                || !Json.isSafeInteger(e.get("time"))
                || data == null
                || (e.has("ignorable") && !e.get("ignorable").isBoolean())
                || (e.has("ignorable") && !e.get("ignorable").booleanValue())) {
            throw bad("invalid event envelope", e, at);
        }
        switch (type) {
            case "turn/end" -> checkTurnEnd(e, data, at);
            case "turn/start" -> {
                if (data.isNull()) {
                    throw bad("turn/start without data", e, at);
                }
                if (data.isObject() && data.has("trigger")) {
                    JsonNode t = data.get("trigger");
                    if (!Json.isSafeInteger(data.get("turn"))
                            || Json.safeLong(data.get("turn")) < 1
                            || !exactKeysSubset(data, "turn", "trigger")
                            || !t.isObject()
                            || !Json.isNonEmptyString(t.get("kind"))) {
                        throw bad("malformed pre-react-loop turn/start", e, at);
                    }
                }
            }
            case "step/start", "tool/call" -> {
                if (data.isNull()) {
                    throw bad(type + " with null data", e, at);
                }
            }
            case "request/header" -> {
                JsonNode cfg = data.path("header").path("config");
                if (!hasProviderModel(cfg)) {
                    throw bad("request/header lacks provider/model", e, at);
                }
                JsonNode effort = cfg.get("reasoningEffort");
                if (effort != null && !Json.isNonEmptyString(effort)) {
                    throw bad("request/header has an invalid reasoningEffort", e, at);
                }
                checkAdapterDefaults(data.path("header").get("adapterDefaults"), cfg, e, at);
            }
            default -> {}
        }
        if (SURFACE.contains(type)) {
            checkMessage(e, type, data, at);
            JsonNode op = e.get("surfaceOp");
            if (op == null) {
                throw bad(type + " requires a surfaceOp marker", e, at);
            }
            boolean ok = (op.isTextual() && op.textValue().equals("append"))
                    || (op.isObject()
                            && exactKeys(op, "op", "start", "end")
                            && "replace".equals(text(op, "op"))
                            && isEventSeq(op.get("start"))
                            && isEventSeq(op.get("end")));
            if (!ok) {
                throw bad(type + " carries an invalid surfaceOp", e, at);
            }
        } else if (e.has("surfaceOp")) {
            throw bad(type + " is not surface-eligible and cannot carry surfaceOp", e, at);
        } else if (e.has("sourceEventSeqs")) {
            throw bad(type + " is not surface-eligible and cannot carry sourceEventSeqs", e, at);
        }
        if (!KNOWN_TYPES.contains(type) && !e.has("ignorable")) {
            throw new UnsupportedSessionFormatException(
                    "unknown session event type \"" + type + "\" at seq " + e.get("seq") + " (" + at
                            + "): likely written by a newer writer; it is not marked ignorable",
                    at.offset());
        }
    }

    /** isEventSeq: a non-negative safe integer. */
    static boolean isEventSeq(JsonNode n) {
        return Json.isSafeInteger(n) && Json.safeLong(n) >= 0;
    }

    private static boolean exactKeysSubset(JsonNode n, String... keys) {
        Set<String> allowed = Set.of(keys);
        if (!onlyKeys(n, allowed)) {
            return false;
        }
        for (String k : keys) {
            if (!n.has(k)) {
                return false;
            }
        }
        return true;
    }

    private static void checkTurnEnd(JsonNode e, JsonNode data, Where at) {
        if (!data.isObject()) {
            return;
        }
        JsonNode reason = data.get("reason");
        if (!Json.isSafeInteger(data.get("turn"))
                || Json.safeLong(data.get("turn")) < 1
                || !exactKeysSubset(data, "turn", "reason")
                || reason == null
                || !reason.isObject()
                || !reason.path("kind").isTextual()) {
            throw bad("malformed turn/end", e, at);
        }
        String kind = reason.get("kind").textValue();
        switch (kind) {
            case "completed", "blocked", "max-tokens", "interrupted", "disposed" -> {
                if (reason.size() != 1) {
                    throw bad("malformed turn/end", e, at);
                }
            }
            case "aborted" -> {
                if (!reason.has("reason") && reason.size() != 1) {
                    throw bad("malformed turn/end", e, at);
                }
            }
            case "error" -> {
                if (!reason.has("error") && !isLegacyError(reason)) {
                    throw bad("malformed turn/end", e, at);
                }
            }
            default -> {}
        }
    }

    /** assertAdapterDefaults: optional object of {reasoningEffort, maxTokens} markers, each exactly true and backed by config. */
    private static void checkAdapterDefaults(JsonNode d, JsonNode cfg, JsonNode e, Where at) {
        if (d == null) {
            return;
        }
        boolean ok = d.isObject();
        if (ok) {
            for (Iterator<Map.Entry<String, JsonNode>> it = d.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                if (!(f.getKey().equals("reasoningEffort") || f.getKey().equals("maxTokens"))
                        || !f.getValue().isBoolean()
                        || !f.getValue().booleanValue()) {
                    ok = false;
                }
            }
        }
        if (ok && d.has("reasoningEffort") && !cfg.has("reasoningEffort")) {
            ok = false;
        }
        if (ok && d.has("maxTokens") && !cfg.has("maxTokens")) {
            ok = false;
        }
        if (!ok) {
            throw bad("request/header has invalid adapterDefaults", e, at);
        }
    }

    /** A pre-react-loop turn/end error reason: {kind, step, failure{message, code, [status, providerRetryAfterMs, requestId]}} or {kind, step, message, [code]}. */
    private static boolean isLegacyError(JsonNode reason) {
        if (!isEventSeq(reason.get("step"))) {
            return false;
        }
        JsonNode f = reason.get("failure");
        if (f != null
                && f.isObject()
                && exactKeysSubset(reason, "kind", "step", "failure")
                && onlyKeys(f, Set.of("message", "code", "status", "providerRetryAfterMs", "requestId"))
                && f.path("message").isTextual()
                && f.path("code").isTextual()
                && (!f.has("status") || f.get("status").isNumber())
                && (!f.has("providerRetryAfterMs")
                        || f.get("providerRetryAfterMs").isNumber())
                && (!f.has("requestId") || f.get("requestId").isTextual())) {
            return true;
        }
        boolean keys = reason.has("code")
                ? exactKeysSubset(reason, "kind", "step", "message", "code")
                : exactKeysSubset(reason, "kind", "step", "message");
        return keys
                && reason.get("message").isTextual()
                && (!reason.has("code") || reason.get("code").isTextual());
    }

    private static boolean hasProviderModel(JsonNode n) {
        return n != null
                && n.isObject()
                && Json.isNonEmptyString(n.get("provider"))
                && Json.isNonEmptyString(n.get("model"));
    }

    private static void checkMessage(JsonNode e, String type, JsonNode data, Where at) {
        JsonNode message = type.equals("user/message") ? data : (data.isObject() ? data.get("message") : null);
        if (message == null || !message.isObject() || !Json.isNonEmptyString(message.get("id"))) {
            throw bad(type + " lacks an identified message", e, at);
        }
        String role = type.equals("assistant/message") ? "assistant" : "user";
        if (!role.equals(text(message, "role"))) {
            throw bad(type + " message must have role \"" + role + "\"", e, at);
        }
        JsonNode source = message.get("source");
        if (source == null || !source.isObject() || !Json.isNonEmptyString(source.get("kind"))) {
            throw bad(type + " message has invalid source", e, at);
        }
        JsonNode content = message.get("content");
        if (content == null || !content.isArray()) {
            throw bad(type + " message has invalid content", e, at);
        }
        if (type.equals("assistant/message")) {
            if (!"model".equals(text(source, "kind")) || !hasProviderModel(source)) {
                throw bad(type + " message must have model source", e, at);
            }
        } else if (type.equals("tool/result")) {
            if (!"tool".equals(text(source, "kind")) || !Json.isNonEmptyString(source.get("callId"))) {
                throw bad(type + " message must have tool source", e, at);
            }
            JsonNode block = content.get(0);
            if (content.size() != 1
                    || block == null
                    || !block.isObject()
                    || !"tool-result".equals(text(block, "type"))
                    || !block.path("content").isArray()) {
                throw bad(type + " message must contain one tool-result block", e, at);
            }
            if (!source.get("callId").equals(block.get("toolCallId"))) {
                throw bad(type + " message has mismatched tool call ids", e, at);
            }
        }
    }

    private static CorruptSessionLogException bad(String what, JsonNode e, Where at) {
        return new CorruptSessionLogException(
                "invalid stored event at seq " + (e.isObject() ? e.get("seq") : "?") + " (" + at + "): " + what,
                at.offset());
    }
}
