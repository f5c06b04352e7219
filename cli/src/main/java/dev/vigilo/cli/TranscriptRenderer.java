package dev.vigilo.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.input.Names;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Renders a transcript's events (docs/formats/transcript.md) as a readable conversation, one event at a time, as they
 * stream: turns and steps as rules, messages with their role, tool calls and results, usage, the attempt's end, the
 * output, the evaluators and the gates. Text from the agent is printed line by line with control characters escaped
 * ({@code \\uXXXX}), so nothing it says can move the terminal's cursor. Events of unknown types are shown by type.
 */
final class TranscriptRenderer {
    private final PrintWriter out;

    TranscriptRenderer(PrintWriter out) {
        this.out = out;
    }

    void render(JsonNode e) {
        JsonNode d = e.path("data");
        switch (e.path("type").asText()) {
            case "vigilo/case", "vigilo/commit", "request/context" -> {}
            case "turn/start" -> out.println("── turn " + d.path("turn").asLong());
            case "user/message" -> text("user", content(d.path("content")));
            case "step/start" -> out.println("── step " + d.path("step").asLong());
            case "request/header" -> header(d.path("header"));
            case "assistant/message" -> assistant(d);
            case "tool/call" -> {} // shown with its assistant message
            case "tool/result" -> toolResult(d.path("message"));
            case "step/end" -> {}
            case "vigilo/http-response" ->
                text("endpoint answered HTTP " + d.path("status").asInt(), compact(d.path("body")));
            case "vigilo/agent-event" -> text("agent event", compact(d.path("event")));
            case "vigilo/attempt" -> attempt(d);
            case "vigilo/output" -> text("output", d.path("output").asText());
            case "turn/end" -> turnEnd(d.path("reason"));
            case "vigilo/judge-request" -> judge(d, true);
            case "vigilo/judge-response" -> judge(d, false);
            case "vigilo/cached" ->
                out.println(Names.printable(
                        "answered from the answer cache (" + d.path("key").asText() + "), not sent"));
            case "vigilo/limit" ->
                out.println(Names.printable("stopped: " + d.path("message").asText()));
            case "vigilo/evaluator" -> evaluator(d);
            case "vigilo/gates" -> gates(d.path("gates"));
            default -> text("[" + e.path("type").asText() + "]", compact(d));
        }
        out.flush();
    }

    private void header(JsonNode h) {
        JsonNode c = h.path("config");
        StringBuilder b = new StringBuilder("request to " + c.path("model").asText() + " ("
                + c.path("provider").asText());
        if (c.has("temperature")) {
            b.append(", temperature ").append(c.get("temperature").asText());
        }
        if (c.has("maxTokens")) {
            b.append(", max tokens ").append(c.get("maxTokens").asText());
        }
        out.println(Names.printable(b.append(')').toString()));
        if (h.path("system").isTextual()) {
            text("system", h.get("system").asText());
        }
    }

    private void assistant(JsonNode d) {
        JsonNode m = d.path("message");
        String who = "assistant (" + m.path("source").path("model").asText() + ")";
        for (JsonNode block : m.path("content")) {
            switch (block.path("type").asText()) {
                case "text" -> text(who, block.path("text").asText());
                case "reasoning" -> text(who + " reasoning", block.path("text").asText());
                case "tool-call" ->
                    text(
                            who + " calls " + block.path("name").asText() + " ["
                                    + block.path("id").asText() + "]",
                            block.path("arguments").asText());
                default -> text(who + " [" + block.path("type").asText() + "]", compact(block));
            }
        }
        JsonNode u = d.path("usage");
        if (u.isObject()) {
            StringBuilder b =
                    new StringBuilder("usage: " + u.path("inputTokens").asLong() + " input, "
                            + u.path("outputTokens").asLong() + " output tokens");
            if (u.has("cacheReadTokens")) {
                b.append(", ").append(u.get("cacheReadTokens").asLong()).append(" cached");
            }
            if (u.has("reasoningTokens")) {
                b.append(", ").append(u.get("reasoningTokens").asLong()).append(" reasoning");
            }
            out.println(b);
        }
    }

    private void toolResult(JsonNode m) {
        JsonNode block = m.path("content").path(0);
        String label = "tool result [" + block.path("toolCallId").asText() + "]"
                + (block.path("isError").asBoolean(false) ? " (error)" : "");
        text(label, content(block.path("content")));
    }

    private void attempt(JsonNode d) {
        JsonNode err = d.path("error");
        out.println(Names.printable("attempt " + d.path("attempt").asInt() + " "
                + (err.isObject()
                        ? "failed after " + d.path("duration_ms").asLong() + " ms: "
                                + err.path("type").asText() + ": "
                                + err.path("message").asText()
                        : "answered in " + d.path("duration_ms").asLong() + " ms")));
    }

    private void turnEnd(JsonNode reason) {
        String kind = reason.path("kind").asText();
        if (kind.equals("error")) {
            out.println(Names.printable(
                    "── turn ended: error " + reason.path("error").path("code").asText()));
        } else {
            out.println(Names.printable("── turn ended: " + kind));
        }
    }

    private void evaluator(JsonNode d) {
        JsonNode err = d.path("error");
        String verdict = err.isObject()
                ? "errored: " + err.path("type").asText() + ": "
                        + err.path("message").asText()
                : (d.path("passed").asBoolean() ? "passed" : "failed") + " (score "
                        + d.path("score").asText() + ")"
                        + (d.path("reason").isTextual()
                                ? ": " + d.path("reason").asText()
                                : "");
        out.println(Names.printable("evaluator " + d.path("name").asText() + ": " + verdict));
    }

    /** A judge's model call: its request (the rubric it was given) or its answer (status, time, body). */
    private void judge(JsonNode d, boolean request) {
        String who = "judge " + d.path("name").asText() + " attempt "
                + d.path("attempt").asInt();
        if (request) {
            JsonNode messages = d.path("request").path("messages");
            text(
                    who + " asked",
                    messages.isArray() && !messages.isEmpty()
                            ? messages.get(messages.size() - 1).path("content").asText()
                            : compact(d.path("request")));
        } else {
            text(
                    who + " answered HTTP " + d.path("status").asInt() + " in "
                            + d.path("ms").asLong() + " ms",
                    compact(d.path("response")));
        }
    }

    private void gates(JsonNode g) {
        List<String> parts = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = g.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> f = it.next();
            parts.add(f.getKey() + " " + f.getValue().asText());
        }
        out.println(
                Names.printable("gates: " + (parts.isEmpty() ? "none select this case" : String.join(", ", parts))));
    }

    /** The text of content blocks: text blocks as they are, others as compact JSON. */
    private static String content(JsonNode blocks) {
        StringBuilder b = new StringBuilder();
        for (JsonNode block : blocks) {
            if (b.length() > 0) {
                b.append('\n');
            }
            b.append(block.path("text").isTextual() ? block.get("text").asText() : block.toString());
        }
        return b.toString();
    }

    private static String compact(JsonNode n) {
        return n.isTextual() ? n.asText() : n.toString();
    }

    /** {@code label: first line}, further lines indented; every line escaped for the terminal. */
    private void text(String label, String text) {
        String[] lines = text.split("\n", -1);
        out.println(Names.printable(label) + ": " + Names.printable(lines[0]));
        for (int i = 1; i < lines.length; i++) {
            out.println("  " + Names.printable(lines[i]));
        }
    }
}
