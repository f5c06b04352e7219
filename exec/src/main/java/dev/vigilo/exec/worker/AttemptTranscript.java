package dev.vigilo.exec.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.AgentAttempt;
import dev.vigilo.agent.AgentError;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The events of one attempt's transcript, in the published session-log vocabulary (docs/formats/transcript.md): the
 * turn and step framing, the user message (the case's input), the HTTP agent's request header and answer, a command
 * agent's own events mapped to messages, tool calls and tool results, and Vigilo's ignorable {@code vigilo/*} events
 * (the case, the attempt's timing and error, the output, judges' model calls, the evaluators' results and the gate
 * outcomes).
 *
 * <p>Events carry {@code type}, {@code time} and {@code data} (and {@code surfaceOp} or {@code ignorable} where the
 * format needs them); the session-log encoder gives them their seqs. With a sink (the worker's: the transcript's
 * {@code SessionLogEncoder}), the events recorded are handed over at each {@link #flush}, which the recorder calls
 * after every callback: no event tree outlives the callback that built it, and while the call is in flight the
 * attempt holds its events as encoded JSON lines (about a quarter of their trees' heap; docs/benchmarks.md, "Calls in
 * flight"). Without one, the events are kept ({@link #events}, for tests). Memory: the attempt's events, bounded by
 * the agent protocol's limits (an HTTP answer of at most 8 MiB, at most 10,000 command events from at most 8 MiB).
 * Owned by the thread running the case.
 */
final class AttemptTranscript {
    /** The version of Vigilo's transcript vocabulary, in the {@code vigilo/case} event's {@code data.v}. */
    static final int VERSION = 1;
    /** The version of a transcript of one epoch of a run of several: version 1 plus the case event's {@code epoch}. */
    static final int EPOCH_VERSION = 2;

    static final String CASE = "vigilo/case";
    static final String ATTEMPT = "vigilo/attempt";
    static final String OUTPUT = "vigilo/output";
    static final String EVALUATOR = "vigilo/evaluator";
    static final String GATES = "vigilo/gates";
    static final String LIMIT = "vigilo/limit";
    static final String CACHED = "vigilo/cached";
    static final String HTTP_RESPONSE = "vigilo/http-response";
    static final String AGENT_EVENT = "vigilo/agent-event";
    static final String MESSAGES = "vigilo/messages";
    static final String TOOLS = "vigilo/tools";
    static final String JUDGE_REQUEST = "vigilo/judge-request";
    static final String JUDGE_RESPONSE = "vigilo/judge-response";
    /** The provider name recorded for the HTTP agent's endpoint. */
    static final String HTTP_PROVIDER = "openai-compatible";
    /** The provider name recorded for a command agent. */
    static final String COMMAND_PROVIDER = "command";

    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final int TURN = 1;
    /** The largest integer JSON readers of the format take exactly (2^53 - 1). */
    private static final long MAX_SAFE_INTEGER = (1L << 53) - 1;

    private final int attempt;
    private final String defaultModel;
    private final String userText;
    /** the events recorded since the last flush (with a sink), or all of them (without) */
    private final List<ObjectNode> events = new ArrayList<>();
    /** takes the events at each flush; null: they are kept */
    private final Consumer<List<ObjectNode>> sink;
    /** events recorded so far (message ids number them) */
    private int recorded;

    private int step;
    private boolean stepOpen;
    /** the open step's model part has been written (a tool result followed it): the next model part opens a step */
    private boolean toolPhase;

    private final List<ObjectNode> blocks = new ArrayList<>();
    private ObjectNode usage;
    private String provider;
    private String model;
    private boolean turnEnded;
    /** the attempt's first request has been recorded with its header */
    private boolean headerWritten;

    /**
     * @param caseEvent    the {@code vigilo/case} data
     * @param userText     the case's input as the agent receives it (text, or compact JSON)
     * @param provider     the provider recorded on assistant messages ({@link #HTTP_PROVIDER} or
     *                     {@link #COMMAND_PROVIDER})
     * @param defaultModel the model recorded when the agent names none (the configured model, or the command's program)
     */
    AttemptTranscript(int attempt, ObjectNode caseEvent, String userText, String provider, String defaultModel) {
        this(attempt, caseEvent, userText, provider, defaultModel, null);
    }

    /**
     * @param sink takes the events recorded since the previous {@link #flush} at each flush, in order (it may keep
     *             the events, not the list, which is cleared after), e.g. a session-log encoder's {@code add}; null:
     *             the events are kept, see {@link #events}
     */
    AttemptTranscript(
            int attempt,
            ObjectNode caseEvent,
            String userText,
            String provider,
            String defaultModel,
            Consumer<List<ObjectNode>> sink) {
        this.attempt = attempt;
        this.sink = sink;
        this.provider = provider;
        this.defaultModel = defaultModel;
        this.userText = userText;
        this.model = defaultModel;
        add(vigilo(CASE, caseEvent));
        ObjectNode turn = F.objectNode().put("turn", TURN);
        add(event("turn/start", turn));
        ObjectNode user = F.objectNode().put("id", "vigilo-input-a" + attempt).put("role", "user");
        user.putObject("source").put("kind", "user");
        user.putArray("content").addObject().put("type", "text").put("text", userText);
        add(surface("user/message", user));
    }

    int attempt() {
        return attempt;
    }

    /**
     * The events so far (the caller must not modify them); only without a sink.
     *
     * @throws IllegalStateException when the events go to a sink
     */
    List<ObjectNode> events() {
        if (sink != null) {
            throw new IllegalStateException("the events of this transcript go to its sink");
        }
        return events;
    }

    /**
     * Hands the events recorded since the last flush to the sink (nothing without one). Events are recorded in bursts
     * (a request's route and header, an answer's message and step end, the attempt's end): one flush per burst lets
     * the sink serialize them together.
     *
     * @throws IllegalArgumentException from the sink: an event it refuses (the encoder's envelope, vocabulary and
     *                                  surface checks)
     */
    void flush() {
        if (sink == null || events.isEmpty()) {
            return;
        }
        try {
            sink.accept(events);
        } finally {
            events.clear();
        }
    }

    // ------------------------------------------------------------------ HTTP agents

    /**
     * The chat completions request: opens the step and records the route, and on the attempt's first request the
     * request header (and the turns sent, when a template rendered them). A later request of an agent with tools
     * (its messages are the earlier ones plus the answer's tool calls and their results, all recorded already) ends
     * the step holding those results and opens the next one, with the route alone.
     */
    void request(JsonNode body) {
        closeStep();
        openStep();
        String m = text(body.get("model"), defaultModel);
        model = m;
        provider = HTTP_PROVIDER;
        add(event("request/context", F.objectNode().put("provider", provider).put("model", m)));
        if (headerWritten) {
            return;
        }
        headerWritten = true;
        ObjectNode header = F.objectNode();
        ObjectNode config = header.putObject("config").put("provider", provider).put("model", m);
        if (body.path("temperature").isNumber()) {
            config.set("temperature", body.get("temperature"));
        }
        if (body.path("max_tokens").canConvertToLong()) {
            config.put("maxTokens", body.get("max_tokens").asLong());
        }
        for (JsonNode message : body.path("messages")) {
            if ("system".equals(message.path("role").asText())
                    && message.path("content").isTextual()) {
                header.put("system", message.get("content").asText());
            }
        }
        add(event(
                "request/header",
                F.objectNode().<ObjectNode>set("header", header).put("reason", "initial")));
        // A messages template sends turns the user message (the case's input) and the header's system do not say:
        // then the turns as sent are recorded too, so the transcript shows what the model was asked.
        if (!plainTurns(body.path("messages"))) {
            add(vigilo(MESSAGES, F.objectNode().put("attempt", attempt).set("messages", body.path("messages"))));
        }
        // An agent with tools: what the model was offered (the same in every request of the attempt).
        if (body.path("tools").isArray() && !body.path("tools").isEmpty()) {
            add(vigilo(TOOLS, F.objectNode().put("attempt", attempt).set("tools", body.path("tools"))));
        }
    }

    /** Whether {@code messages} is an optional system message and then the case's input as the one user message. */
    private boolean plainTurns(JsonNode messages) {
        int n = messages.size();
        if (!messages.isArray() || n < 1 || n > 2) {
            return false;
        }
        JsonNode user = messages.get(n - 1);
        boolean systemFirst = n == 1
                || "system".equals(messages.get(0).path("role").asText())
                        && messages.get(0).path("content").isTextual();
        return systemFirst
                && "user".equals(user.path("role").asText())
                && user.path("content").isTextual()
                && user.get("content").asText().equals(userText);
    }

    /**
     * The endpoint's answer: a 2xx chat completion becomes the step's assistant message (text, reasoning and tool-call
     * blocks, token usage) and its tool calls; anything else is kept as a {@code vigilo/http-response} event.
     */
    void response(int status, JsonNode body) {
        JsonNode message = body.path("choices").path(0).path("message");
        if (status < 200 || status > 299 || !message.isObject()) {
            add(vigilo(
                    HTTP_RESPONSE,
                    F.objectNode().put("attempt", attempt).put("status", status).set("body", body)));
            return;
        }
        if (body.path("model").isTextual() && !body.get("model").asText().isEmpty()) {
            model = body.get("model").asText();
        }
        if (message.path("reasoning_content").isTextual()) {
            block("reasoning", message.get("reasoning_content").asText());
        }
        JsonNode content = message.get("content");
        if (content != null && content.isTextual()) {
            block("text", content.asText());
        } else if (content != null && content.isArray()) {
            for (JsonNode part : content) {
                if (part.path("text").isTextual()) {
                    block("text", part.get("text").asText());
                }
            }
        }
        int position = 0;
        for (JsonNode call : message.path("tool_calls")) {
            JsonNode fn = call.path("function");
            position++;
            toolCall(
                    // A call without an id gets the one an agent with tools sends back with its result (the step is
                    // the attempt's model call): call_<step>_<position>.
                    text(call.get("id"), "call_" + step + "_" + position),
                    text(fn.get("name"), "unnamed"),
                    fn.path("arguments").isTextual()
                            ? fn.get("arguments").asText()
                            : fn.path("arguments").toString());
        }
        JsonNode u = body.get("usage");
        if (u != null && u.isObject()) {
            long prompt = u.path("prompt_tokens").asLong(0);
            long cached = u.path("prompt_tokens_details").path("cached_tokens").asLong(0);
            ObjectNode usage = F.objectNode()
                    .put("inputTokens", Math.max(0, prompt - cached))
                    .put("outputTokens", Math.max(0, u.path("completion_tokens").asLong(0)));
            if (cached > 0) {
                usage.put("cacheReadTokens", cached);
            }
            long reasoning =
                    u.path("completion_tokens_details").path("reasoning_tokens").asLong(0);
            if (reasoning > 0) {
                usage.put("reasoningTokens", reasoning);
            }
            this.usage = usage;
        }
        if (message.path("tool_calls").isArray() && !message.path("tool_calls").isEmpty()) {
            // The step stays open: an agent with tools records the calls' results in it (the reader takes a
            // result only in its call's step); the next request, the output or the attempt's end closes it.
            flushMessage();
            toolPhase = true;
            return;
        }
        closeStep();
    }

    /** The result of an http agent's tool call, in the step of the answer that made the call. */
    void toolResult(String callId, String content, boolean isError) {
        toolResult(callId, F.textNode(content), isError, System.currentTimeMillis());
    }

    // ------------------------------------------------------------------ command agents

    /**
     * One event a command agent wrote (docs/formats/agent-protocol.md, "Events"): {@code reasoning}, {@code message},
     * {@code tool_call}, {@code tool_result} and {@code usage} become the format's events; any other object is kept
     * as it was written in a {@code vigilo/agent-event}.
     */
    void agentEvent(JsonNode e) {
        long time = e.path("time").isIntegralNumber()
                        && e.get("time").canConvertToLong()
                        && e.get("time").asLong() >= 0
                        && e.get("time").asLong() <= MAX_SAFE_INTEGER
                ? e.get("time").asLong()
                : System.currentTimeMillis();
        String type = e.path("type").asText("");
        if (e.path("model").isTextual() && !e.get("model").asText().isEmpty()) {
            model = e.get("model").asText();
        }
        switch (type) {
            case "reasoning" -> {
                if (e.path("text").isTextual()) {
                    modelPart();
                    block("reasoning", e.get("text").asText());
                    return;
                }
            }
            case "message" -> {
                String role = e.path("role").asText("assistant");
                if (e.path("text").isTextual() && role.equals("assistant")) {
                    modelPart();
                    block("text", e.get("text").asText());
                    return;
                }
                if (e.path("text").isTextual() && role.equals("user")) {
                    closeStep();
                    ObjectNode user = F.objectNode()
                            .put("id", "vigilo-user-a" + attempt + "-" + recorded)
                            .put("role", "user");
                    user.putObject("source").put("kind", "user");
                    user.putArray("content")
                            .addObject()
                            .put("type", "text")
                            .put("text", e.get("text").asText());
                    add(surface("user/message", user), time);
                    return;
                }
            }
            case "tool_call" -> {
                if (e.path("id").isTextual() && e.path("name").isTextual() && e.has("arguments")) {
                    modelPart();
                    JsonNode args = e.get("arguments");
                    toolCall(
                            e.get("id").asText(),
                            e.get("name").asText(),
                            args.isTextual() ? args.asText() : args.toString());
                    return;
                }
            }
            case "tool_result" -> {
                if (e.path("id").isTextual() && e.has("content")) {
                    toolResult(
                            e.get("id").asText(),
                            e.get("content"),
                            e.path("is_error").asBoolean(false),
                            time);
                    return;
                }
            }
            case "usage" -> {
                if (e.path("input_tokens").canConvertToLong()
                        && e.path("output_tokens").canConvertToLong()) {
                    modelPart();
                    ObjectNode u = F.objectNode()
                            .put(
                                    "inputTokens",
                                    Math.max(0, e.get("input_tokens").asLong()))
                            .put(
                                    "outputTokens",
                                    Math.max(0, e.get("output_tokens").asLong()));
                    if (e.path("reasoning_tokens").canConvertToLong()) {
                        u.put(
                                "reasoningTokens",
                                Math.max(0, e.get("reasoning_tokens").asLong()));
                    }
                    if (e.path("cache_read_tokens").canConvertToLong()) {
                        u.put(
                                "cacheReadTokens",
                                Math.max(0, e.get("cache_read_tokens").asLong()));
                    }
                    usage = u;
                    return;
                }
            }
            default -> {}
        }
        add(vigilo(AGENT_EVENT, F.objectNode().put("attempt", attempt).set("event", e)), time);
    }

    /** A model part of a command agent's step: after the step's tool results, it opens the next step. */
    private void modelPart() {
        if (toolPhase) {
            closeStep();
        }
        openStep();
    }

    private void toolResult(String callId, JsonNode content, boolean isError, long time) {
        openStep();
        flushMessage();
        toolPhase = true;
        ObjectNode block = F.objectNode().put("type", "tool-result").put("toolCallId", callId);
        block.putArray("content")
                .addObject()
                .put("type", "text")
                .put("text", content.isTextual() ? content.asText() : content.toString());
        if (isError) {
            block.put("isError", true);
        }
        ObjectNode message = F.objectNode()
                .put("id", "vigilo-tool-a" + attempt + "-" + recorded)
                .put("role", "user");
        message.putObject("source").put("kind", "tool").put("callId", callId);
        message.putArray("content").add(block);
        ObjectNode data = F.objectNode().put("turn", TURN).put("step", step);
        data.set("message", message);
        if (isError) {
            data.putObject("error").put("name", "ToolError").put("code", "TOOL_FAILED");
        }
        add(surface("tool/result", data), time);
    }

    // ------------------------------------------------------------------ both kinds

    /**
     * The attempt ended: closes the open step, records the attempt's timing, and for a failed attempt ends the turn
     * with the error ({@code turn/end} reason {@code error}, the error type as its code).
     */
    void end(AgentAttempt a) {
        closeStep();
        ObjectNode d = F.objectNode()
                .put("attempt", a.number())
                .put("started_at", a.started().toString())
                .put("duration_ms", a.duration().toMillis());
        if (a.error().isPresent()) {
            AgentError e = a.error().get();
            d.putObject("error").put("type", e.type().code()).put("message", e.message());
        } else {
            d.putNull("error");
        }
        add(vigilo(ATTEMPT, d));
        if (a.error().isPresent()) {
            AgentError e = a.error().get();
            ObjectNode reason = F.objectNode().put("kind", "error");
            reason.putObject("error")
                    .put("message", e.message())
                    .put("code", e.type().code());
            endTurn(reason);
        }
    }

    /** The output the evaluators judged; then the turn ends completed. */
    void output(String output, long length, String sha256) {
        closeStep();
        add(vigilo(
                OUTPUT,
                F.objectNode().put("output", output).put("length", length).put("sha256", sha256)));
        endTurn(F.objectNode().put("kind", "completed"));
    }

    /**
     * One of a judge's model calls, observed while the evaluators ran: a {@link #JUDGE_REQUEST} or {@link
     * #JUDGE_RESPONSE} event, recorded after the output and before the evaluators' results.
     */
    void judge(String type, ObjectNode data) {
        add(vigilo(type, data));
    }

    /** One evaluator's result on the output; {@code reason} null when it gave none. */
    void evaluator(
            String name,
            boolean passed,
            double score,
            String reason,
            String errorType,
            String errorMessage,
            long millis) {
        ObjectNode d = F.objectNode().put("name", name).put("passed", passed).put("score", score);
        if (reason != null) {
            d.put("reason", reason);
        }
        if (errorType != null) {
            d.putObject("error").put("type", errorType).put("message", errorMessage);
        } else {
            d.putNull("error");
        }
        d.put("ms", millis);
        add(vigilo(EVALUATOR, d));
    }

    /** The attempt is answered from the answer cache under {@code key}: nothing was sent, no tokens were paid. */
    void cachedAnswer(String key) {
        add(vigilo(CACHED, F.objectNode().put("key", key)));
    }

    /** A per-case limit stopped the case after its evaluators ran ({@code message} names the limit and figure). */
    void limitExceeded(String message) {
        add(vigilo(LIMIT, F.objectNode().put("type", "limit_exceeded").put("message", message)));
    }

    /** The case's outcome per selecting gate (the last attempt's transcript only). */
    void gates(boolean errored, Map<String, String> gates) {
        ObjectNode d = F.objectNode().put("status", errored ? "errored" : "ok");
        ObjectNode g = d.putObject("gates");
        gates.forEach(g::put);
        add(vigilo(GATES, d));
    }

    private void endTurn(ObjectNode reason) {
        if (turnEnded) {
            return;
        }
        turnEnded = true;
        ObjectNode d = F.objectNode().put("turn", TURN);
        d.set("reason", reason);
        add(event("turn/end", d));
    }

    private void openStep() {
        if (stepOpen) {
            return;
        }
        step++;
        stepOpen = true;
        toolPhase = false;
        add(event("step/start", F.objectNode().put("turn", TURN).put("step", step)));
    }

    /** Writes the step's assistant message (and its tool calls) and ends the step. */
    private void closeStep() {
        if (!stepOpen) {
            return;
        }
        flushMessage();
        add(event("step/end", F.objectNode().put("turn", TURN).put("step", step)));
        stepOpen = false;
        toolPhase = false;
    }

    private void block(String type, String text) {
        blocks.add(F.objectNode().put("type", type).put("text", text));
    }

    private void toolCall(String id, String name, String arguments) {
        blocks.add(F.objectNode()
                .put("type", "tool-call")
                .put("id", id)
                .put("name", name)
                .put("arguments", arguments));
    }

    /** The pending blocks as the step's assistant/message, then one tool/call per tool-call block. */
    private void flushMessage() {
        if (blocks.isEmpty() && usage == null) {
            return;
        }
        ObjectNode message = F.objectNode()
                .put("id", "vigilo-assistant-a" + attempt + "-s" + step + "-" + recorded)
                .put("role", "assistant");
        message.putObject("source")
                .put("kind", "model")
                .put("provider", provider)
                .put("model", model);
        ArrayNode content = message.putArray("content");
        blocks.forEach(content::add);
        ObjectNode data = F.objectNode().put("turn", TURN).put("step", step);
        data.set("message", message);
        if (usage != null) {
            data.set("usage", usage);
        }
        add(surface("assistant/message", data));
        for (ObjectNode b : blocks) {
            if ("tool-call".equals(b.get("type").asText())) {
                add(event(
                        "tool/call",
                        F.objectNode()
                                .put("turn", TURN)
                                .put("step", step)
                                .put("callId", b.get("id").asText())
                                .put("name", b.get("name").asText())
                                .put("arguments", b.get("arguments").asText())));
            }
        }
        blocks.clear();
        usage = null;
    }

    private void add(ObjectNode e) {
        add(e, System.currentTimeMillis());
    }

    private void add(ObjectNode e, long time) {
        e.put("time", time);
        events.add(e);
        recorded++;
    }

    private static ObjectNode event(String type, ObjectNode data) {
        ObjectNode e = F.objectNode().put("type", type);
        e.set("data", data);
        return e;
    }

    private static ObjectNode surface(String type, ObjectNode data) {
        return event(type, data).put("surfaceOp", "append");
    }

    private static ObjectNode vigilo(String type, ObjectNode data) {
        return event(type, data).put("ignorable", true);
    }

    private static String text(JsonNode n, String fallback) {
        return n != null && n.isTextual() && !n.asText().isEmpty() ? n.asText() : fallback;
    }
}
