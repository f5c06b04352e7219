package dev.vigilo.llm;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One message of a request: {@code {"role", "content"}}, plus the tool calls of an assistant message and the
 * {@code tool_call_id} of a tool message (the turns of a tool loop).
 *
 * @param role       {@code system}, {@code user}, {@code assistant} or {@code tool}
 * @param content    the text, absent for an assistant message that only calls tools (sent as {@code null})
 * @param toolCalls  the tool calls an assistant message made
 * @param toolCallId the call a tool message answers
 */
public record ChatMessage(
        String role, Optional<String> content, List<ToolCall> toolCalls, Optional<String> toolCallId) {
    public ChatMessage {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(content, "content");
        toolCalls = List.copyOf(toolCalls);
        Objects.requireNonNull(toolCallId, "toolCallId");
    }

    /** A message of {@code role} with text content. */
    public static ChatMessage of(String role, String content) {
        return new ChatMessage(role, Optional.of(content), List.of(), Optional.empty());
    }

    /** An assistant turn that asked for tool calls. */
    public static ChatMessage assistantCalls(List<ToolCall> calls) {
        return new ChatMessage("assistant", Optional.empty(), calls, Optional.empty());
    }

    /** A tool's answer to call {@code id}. */
    public static ChatMessage toolResult(String id, String content) {
        return new ChatMessage("tool", Optional.of(content), List.of(), Optional.of(id));
    }

    /** The message as the request carries it. */
    public ObjectNode toJson() {
        ObjectNode o = JsonNodeFactory.instance.objectNode().put("role", role);
        if (content.isPresent()) {
            o.put("content", content.get());
        } else {
            o.putNull("content");
        }
        if (!toolCalls.isEmpty()) {
            ArrayNode calls = o.putArray("tool_calls");
            toolCalls.forEach(c -> calls.add(c.toJson()));
        }
        toolCallId.ifPresent(id -> o.put("tool_call_id", id));
        return o;
    }
}
