package dev.vigilo.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Objects;
import java.util.Optional;

/**
 * A request's {@code response_format}: structured output as any JSON object, or as JSON a schema describes.
 *
 * @param type   {@code json_object} or {@code json_schema}
 * @param name   the schema's name ({@code json_schema} only; OpenAI allows {@code [A-Za-z0-9_-]{1,64}})
 * @param schema the JSON Schema ({@code json_schema} only)
 */
public record ResponseFormat(String type, Optional<String> name, Optional<JsonNode> schema) {
    public ResponseFormat {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(schema, "schema");
    }

    /** {@code {"type": "json_object"}}. */
    public static ResponseFormat jsonObject() {
        return new ResponseFormat("json_object", Optional.empty(), Optional.empty());
    }

    /** {@code {"type": "json_schema", "json_schema": {"name", "schema"}}}. */
    public static ResponseFormat jsonSchema(String name, JsonNode schema) {
        return new ResponseFormat("json_schema", Optional.of(name), Optional.of(schema));
    }

    /** The {@code response_format} value. */
    public ObjectNode toJson() {
        ObjectNode o = JsonNodeFactory.instance.objectNode().put("type", type);
        if (name.isPresent() || schema.isPresent()) {
            ObjectNode js = o.putObject(type);
            name.ifPresent(n -> js.put("name", n));
            schema.ifPresent(s -> js.set("schema", s));
        }
        return o;
    }
}
