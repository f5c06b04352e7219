package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
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
 * A chat step's JSON Schema (draft 2020-12 unless the schema names another dialect with {@code $schema}), compiled
 * once with networknt's json-schema-validator; {@link #violations} says why an answer does not satisfy it, in the
 * validator's words. Thread-safe (compiled schemas are).
 */
final class ResponseSchema {
    /** Messages kept per violation report: the first few are what a person reads. */
    private static final int MAX_MESSAGES = 5;

    private static final SchemaRegistry REGISTRY =
            SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

    private final Schema schema;

    private ResponseSchema(Schema schema) {
        this.schema = schema;
    }

    /** Compiles {@code schema}; it was checked by {@link #problem} when the pipeline was parsed. */
    static ResponseSchema compile(JsonNode schema) {
        return new ResponseSchema(REGISTRY.getSchema(schema));
    }

    /**
     * Why {@code schema} is not a usable JSON Schema (its meta-schema's verdict, or the compiler's), empty if it is
     * one.
     */
    static Optional<String> problem(JsonNode schema) {
        try {
            String dialect = schema.path("$schema").asText(SpecificationVersion.DRAFT_2020_12.getDialectId());
            Schema meta = REGISTRY.getSchema(SchemaLocation.of(dialect));
            List<Error> errors = meta.validate(schema);
            if (!errors.isEmpty()) {
                return Optional.of(summary(errors));
            }
            REGISTRY.getSchema(schema).validate(Json.MAPPER.nullNode());
            return Optional.empty();
        } catch (SchemaException | IllegalArgumentException | IllegalStateException e) {
            return Optional.of(
                    String.valueOf(e.getMessage()).lines().findFirst().orElse("unusable schema"));
        }
    }

    /** The violations of {@code answer} as one line; empty if it satisfies the schema. */
    Optional<String> violations(JsonNode answer) {
        List<Error> errors = schema.validate(answer);
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
