package dev.vigilo.agent;

import dev.vigilo.config.CompiledSchema;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import java.io.IOException;
import java.util.Map;

/**
 * The MCP SDK's JSON Schema validation (structured tool output against a tool's {@code outputSchema}) done with the
 * project's own validator ({@link CompiledSchema}, the one {@code tools} arguments are checked with). The SDK's
 * default validator is built on the Jackson 3 line of networknt's json-schema-validator, which cannot share the
 * classpath with the Jackson 2 line the config module uses (same coordinates), so the SDK is given this one.
 */
final class McpSchemaValidator implements JsonSchemaValidator {
    @Override
    public ValidationResponse validate(Map<String, Object> schema, Object structuredContent) {
        try {
            var mapper = McpJsonDefaults.getMapper();
            String content = mapper.writeValueAsString(structuredContent);
            var problem = CompiledSchema.compile(Json.parse(mapper.writeValueAsString(schema)))
                    .violations(Json.parse(content));
            return problem.isPresent()
                    ? ValidationResponse.asInvalid(problem.get())
                    : ValidationResponse.asValid(content);
        } catch (IOException | IllegalArgumentException e) {
            return ValidationResponse.asInvalid("cannot validate against the schema: " + e.getMessage());
        }
    }
}
