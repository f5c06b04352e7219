package dev.vigilo.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;
import java.util.Optional;

/**
 * A function a request offers the model ({@code tools[i]}).
 *
 * @param name        the function's name
 * @param description what it does, for the model
 * @param parameters  the JSON Schema of its arguments
 */
public record ChatTool(String name, Optional<String> description, JsonNode parameters) {
    public ChatTool {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(parameters, "parameters");
    }

    /** {@code {"type": "function", "function": {"name", "description"?, "parameters"}}}. */
    public ObjectNode toJson() {
        ObjectNode o = JsonNodeFactory.instance.objectNode().put("type", "function");
        ObjectNode f = o.putObject("function").put("name", name);
        description.ifPresent(d -> f.put("description", d));
        f.set("parameters", parameters.deepCopy());
        return o;
    }
}
