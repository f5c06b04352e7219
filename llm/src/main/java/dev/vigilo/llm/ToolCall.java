package dev.vigilo.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;
import java.util.Optional;

/**
 * A function call an answer asks for ({@code tool_calls[i]}), or one an assistant message repeats in a later
 * request of a tool loop.
 *
 * @param id        the call's id, which the tool message answering it names ({@code tool_call_id})
 * @param name      the function's name
 * @param arguments the arguments as the model wrote them: JSON text, not necessarily valid
 */
public record ToolCall(Optional<String> id, String name, String arguments) {
    public ToolCall {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(arguments, "arguments");
    }

    /** One element of an answer's {@code tool_calls}; absent fields read as empty text. */
    static ToolCall parse(JsonNode call) {
        JsonNode f = call.path("function");
        return new ToolCall(
                call.path("id").isTextual() ? Optional.of(call.get("id").asText()) : Optional.empty(),
                f.path("name").asText(""),
                f.path("arguments").isTextual()
                        ? f.get("arguments").asText()
                        : f.path("arguments").isMissingNode()
                                ? ""
                                : f.get("arguments").toString());
    }

    /** {@code {"id", "type": "function", "function": {"name", "arguments"}}}. */
    public ObjectNode toJson() {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        id.ifPresent(i -> o.put("id", i));
        o.put("type", "function");
        o.putObject("function").put("name", name).put("arguments", arguments);
        return o;
    }
}
