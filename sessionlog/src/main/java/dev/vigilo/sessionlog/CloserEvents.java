package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Streaming form of the published interruptedTurnClosers: follows turn/step/tool-call state over stored events
 * and synthesizes the closers of an open turn (tool/result errors, step/end, turn/end{interrupted}) with seqs
 * continuing after the last event and its time. O(open calls) memory.
 */
final class CloserEvents {
    static final String NOT_STARTED_TEXT =
            "The tool call was interrupted before the Harness recorded it as started. Retry it if it is still needed.";
    static final String UNKNOWN_TEXT =
            "The tool call was interrupted after it was recorded, but no result was durably recorded. Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the operation is read-only or idempotent; if it may have side effects, first verify external state or ask the user. Do not retry blindly.";

    private JsonNode openTurn;
    private JsonNode openStep;
    private final Map<String, long[]> pending = new LinkedHashMap<>(); // callId -> {hasCallSeq, callSeq}
    private final Map<String, JsonNode> pendingStep = new LinkedHashMap<>();
    private long lastSeq = -1;
    private long lastTime;
    private boolean any;

    long lastTime() {
        return lastTime;
    }

    void accept(JsonNode e) {
        any = true;
        lastSeq = Json.safeLong(e.get("seq"));
        lastTime = Json.safeLong(e.get("time"));
        JsonNode data = e.get("data");
        switch (e.get("type").textValue()) {
            case "turn/start" -> {
                openTurn = data.get("turn") == null ? Json.MAPPER.missingNode() : data.get("turn");
                openStep = null;
                pending.clear();
                pendingStep.clear();
            }
            case "turn/end" -> {
                openTurn = null;
                openStep = null;
                pending.clear();
                pendingStep.clear();
            }
            case "step/start" -> openStep = data.get("step") == null ? Json.MAPPER.missingNode() : data.get("step");
            case "step/end" -> {
                pending.clear();
                pendingStep.clear();
                openStep = null;
            }
            case "assistant/message" -> {
                for (JsonNode block : data.get("message").get("content")) {
                    if (block != null && "tool-call".equals(block.path("type").textValue()) && block.has("id")) {
                        String id = String.valueOf(
                                block.get("id").isTextual()
                                        ? block.get("id").textValue()
                                        : block.get("id").toString());
                        // Map.set keeps insertion order of the first set; re-setting resets the entry's value only
                        pending.put(id, new long[] {0, 0});
                        pendingStep.put(id, data.get("step"));
                    }
                }
            }
            case "tool/call" -> {
                JsonNode cid = data.get("callId");
                if (cid != null && cid.isTextual()) {
                    long[] entry = pending.get(cid.textValue());
                    if (entry != null) {
                        entry[0] = 1;
                        entry[1] = lastSeq;
                    }
                }
            }
            case "tool/result" -> {
                String cid = data.get("message").get("source").get("callId").textValue();
                pending.remove(cid);
                pendingStep.remove(cid);
            }
            default -> {}
        }
    }

    /** As {@link #accept} for line {@code i} of {@code x}, an event the fast row path summarized (see {@link LineIndex}). */
    void acceptFast(LineIndex x, int i, byte[] buf) {
        any = true;
        lastSeq = x.seq[i];
        lastTime = x.time[i];
        switch (x.kind[i]) {
            case EventKinds.TURN_START -> {
                openTurn = number(x.num[i]);
                openStep = null;
                pending.clear();
                pendingStep.clear();
            }
            case EventKinds.TURN_END -> {
                openTurn = null;
                openStep = null;
                pending.clear();
                pendingStep.clear();
            }
            case EventKinds.STEP_START -> openStep = number(x.num[i]);
            case EventKinds.STEP_END -> {
                pending.clear();
                pendingStep.clear();
                openStep = null;
            }
            case EventKinds.ASSISTANT_MESSAGE -> {
                for (int k = x.idsFrom[i]; k < x.idsTo[i]; k++) {
                    String id = new String(buf, x.idStart[k], x.idLen[k], StandardCharsets.US_ASCII);
                    pending.put(id, new long[] {0, 0});
                    pendingStep.put(id, x.num[i] == LineIndex.NO_NUMBER ? null : number(x.num[i]));
                }
            }
            case EventKinds.TOOL_CALL -> {
                if (x.refStart[i] >= 0 && !pending.isEmpty()) {
                    long[] entry = pending.get(new String(buf, x.refStart[i], x.refLen[i], StandardCharsets.US_ASCII));
                    if (entry != null) {
                        entry[0] = 1;
                        entry[1] = lastSeq;
                    }
                }
            }
            case EventKinds.TOOL_RESULT -> {
                if (!pending.isEmpty()) {
                    String cid = new String(buf, x.refStart[i], x.refLen[i], StandardCharsets.US_ASCII);
                    pending.remove(cid);
                    pendingStep.remove(cid);
                }
            }
            default -> {}
        }
    }

    /** The node JSON.parse's number would be in the stored event: missing when absent. */
    private static JsonNode number(long v) {
        if (v == LineIndex.NO_NUMBER) {
            return MissingNode.getInstance();
        }
        return v == (int) v ? IntNode.valueOf((int) v) : LongNode.valueOf(v);
    }

    /** @return the closers the published reader would synthesize now (empty when no turn is open) */
    List<ObjectNode> closers() {
        List<ObjectNode> out = new ArrayList<>();
        if (openTurn == null || !any) {
            return out;
        }
        long seq = lastSeq + 1;
        for (Map.Entry<String, long[]> p : pending.entrySet()) {
            String callId = p.getKey();
            boolean started = p.getValue()[0] == 1;
            ObjectNode ev = Json.MAPPER.createObjectNode();
            ev.put("type", "tool/result").put("seq", seq).put("time", lastTime);
            ObjectNode d = ev.putObject("data");
            setMaybe(d, "turn", openTurn);
            setMaybe(d, "step", pendingStep.get(callId));
            ObjectNode msg = d.putObject("message");
            msg.put("id", "interrupted-tool-result-" + callId + "-" + seq).put("role", "user");
            msg.putObject("source").put("kind", "tool").put("callId", callId);
            ObjectNode block = msg.putArray("content").addObject();
            block.put("type", "tool-result").put("toolCallId", callId).put("isError", true);
            block.putArray("content")
                    .addObject()
                    .put("type", "text")
                    .put("text", started ? UNKNOWN_TEXT : NOT_STARTED_TEXT);
            d.putObject("error")
                    .put("name", started ? "ToolOutcomeUnknownError" : "ToolNotStartedError")
                    .put("code", started ? "TOOL_OUTCOME_UNKNOWN" : "TOOL_NOT_STARTED");
            ev.put("surfaceOp", "append");
            if (started) {
                ev.putArray("sourceEventSeqs").add(p.getValue()[1]);
            }
            out.add(ev);
            seq++;
        }
        if (openStep != null) {
            ObjectNode ev = Json.MAPPER.createObjectNode();
            ev.put("type", "step/end").put("seq", seq++).put("time", lastTime);
            ObjectNode d = ev.putObject("data");
            setMaybe(d, "turn", openTurn);
            setMaybe(d, "step", openStep);
            out.add(ev);
        }
        ObjectNode ev = Json.MAPPER.createObjectNode();
        ev.put("type", "turn/end").put("seq", seq).put("time", lastTime);
        ObjectNode d = ev.putObject("data");
        setMaybe(d, "turn", openTurn);
        d.putObject("reason").put("kind", "interrupted");
        out.add(ev);
        return out;
    }

    private static void setMaybe(ObjectNode d, String k, JsonNode v) {
        if (v != null && !v.isMissingNode()) {
            d.set(k, v);
        }
    }
}
