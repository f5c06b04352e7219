package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.config.CompiledSchema;
import java.io.IOException;
import java.util.Optional;

/**
 * {@code json}: the output is exactly one JSON value (whitespace around it allowed; duplicate keys, trailing content
 * and more than the module's nesting bound refused, as {@link Json} parses), and, with a {@code schema}, the value
 * satisfies it. Needs no {@code expected}.
 */
final class JsonEvaluator implements Evaluator {
    private final Optional<CompiledSchema> schema;

    JsonEvaluator(Optional<CompiledSchema> schema) {
        this.schema = schema;
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output) {
        if (output.isBlank()) {
            return Verdict.of(false, "output is empty, not JSON");
        }
        JsonNode value;
        try {
            value = Json.parse(output);
        } catch (IOException e) {
            return Verdict.of(false, "output is not JSON: " + Texts.oneLine(Json.problem(e), 300));
        }
        String what = "output is JSON (" + type(value) + ")";
        if (schema.isEmpty()) {
            return Verdict.of(true, what);
        }
        Optional<String> violations = schema.get().violations(value);
        return violations.isEmpty()
                ? Verdict.of(true, what + " and satisfies the schema")
                : Verdict.of(false, what + " but does not satisfy the schema: " + violations.get());
    }

    /** A JSON value's type in JSON's words: {@code an object}, {@code an array}, {@code a string}, ... */
    private static String type(JsonNode n) {
        return switch (n.getNodeType()) {
            case OBJECT -> "an object";
            case ARRAY -> "an array";
            case STRING -> "a string";
            case NUMBER -> "a number";
            case BOOLEAN -> "a boolean";
            default -> "null";
        };
    }
}
