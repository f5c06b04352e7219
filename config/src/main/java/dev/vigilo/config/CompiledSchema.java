package dev.vigilo.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaException;
import com.networknt.schema.SchemaLocation;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A JSON Schema given in a configuration (draft 2020-12 unless the schema names another dialect with {@code
 * $schema}), compiled once with networknt's json-schema-validator: datagen's chat steps check answers with it, and
 * run profiles' {@code json} evaluators check outputs. {@link #problem} is what a configuration reader reports for a
 * schema that is not usable, so a schema accepted when the configuration is read compiles where it is used.
 * {@link #violations} says why a value does not satisfy the schema, in the validator's words. Thread-safe (compiled
 * schemas are).
 */
public final class CompiledSchema {
    /** Messages kept per violation report: the first few are what a person reads. */
    private static final int MAX_MESSAGES = 5;

    private static final SchemaRegistry REGISTRY =
            SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

    private final Schema schema;

    private CompiledSchema(Schema schema) {
        this.schema = schema;
    }

    /** Compiles {@code schema}; check it with {@link #problem} first (when the configuration is read). */
    public static CompiledSchema compile(JsonNode schema) {
        return new CompiledSchema(REGISTRY.getSchema(schema));
    }

    /**
     * Why {@code schema} is not a usable JSON Schema (its meta-schema's verdict, or the compiler's), empty if it is
     * one.
     */
    public static Optional<String> problem(JsonNode schema) {
        try {
            String dialect = schema.path("$schema").asText(SpecificationVersion.DRAFT_2020_12.getDialectId());
            Schema meta = REGISTRY.getSchema(SchemaLocation.of(dialect));
            List<Error> errors = meta.validate(schema);
            if (!errors.isEmpty()) {
                return Optional.of(summary(errors));
            }
            REGISTRY.getSchema(schema).validate(JsonNodeFactory.instance.nullNode());
            return Optional.empty();
        } catch (SchemaException | IllegalArgumentException | IllegalStateException e) {
            return Optional.of(
                    String.valueOf(e.getMessage()).lines().findFirst().orElse("unusable schema"));
        }
    }

    /**
     * The violations of {@code value} as one line (the first five, each {@code at /a/b: } and the validator's
     * message, joined by {@code "; "}, then {@code and N more}); empty if it satisfies the schema.
     */
    public Optional<String> violations(JsonNode value) {
        List<Error> errors = schema.validate(value);
        return errors.isEmpty() ? Optional.empty() : Optional.of(summary(errors));
    }

    /** "at /a/b: " for a violation inside the document, nothing at its root. */
    private static String where(Error e) {
        String path =
                e.getInstanceLocation() == null ? "" : e.getInstanceLocation().toString();
        return path.isEmpty() || path.equals("$") || path.equals("/") ? "" : "at " + path + ": ";
    }

    private static String summary(List<Error> errors) {
        String shown = errors.stream()
                .limit(MAX_MESSAGES)
                .map(e -> where(e) + e.getMessage().strip())
                .collect(Collectors.joining("; "));
        return errors.size() > MAX_MESSAGES ? shown + "; and " + (errors.size() - MAX_MESSAGES) + " more" : shown;
    }
}
