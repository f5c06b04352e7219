package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.config.CompiledSchema;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Typed reads of one object of a run configuration ({@code agent}, or one {@code evaluator_plan} entry). The
 * profile parser validated these values when the run was created; they are checked again because a worker must not
 * act on a configuration it does not understand. A problem is an {@link InvalidInputException} naming the path.
 */
final class Params {
    private final JsonNode node;
    private final String at;

    private Params(JsonNode node, String at) {
        this.node = node;
        this.at = at;
    }

    static Params of(JsonNode node, String at) {
        if (node == null || !node.isObject()) {
            throw bad(at, "must be an object, got " + (node == null ? "nothing" : node.getNodeType()));
        }
        return new Params(node, at);
    }

    String at() {
        return at;
    }

    /** The raw value of {@code key}, null when absent. */
    /** The whole object. */
    JsonNode node() {
        return node;
    }

    JsonNode get(String key) {
        return node.get(key);
    }

    /** Whether {@code key} is given (and not null). */
    boolean has(String key) {
        JsonNode v = node.get(key);
        return v != null && !v.isNull();
    }

    String text(String key) {
        return optionalText(key).orElseThrow(() -> bad(at + "." + key, "is required"));
    }

    Optional<String> optionalText(String key) {
        JsonNode v = node.get(key);
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        if (!v.isTextual() || v.asText().isEmpty()) {
            throw bad(at + "." + key, "must be a non-empty string");
        }
        return Optional.of(v.asText());
    }

    int integer(String key, int min, int max, int dflt) {
        return optionalInteger(key, min, max).orElse(dflt);
    }

    Optional<Integer> optionalInteger(String key, int min, int max) {
        JsonNode v = node.get(key);
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        if (!v.isIntegralNumber() || v.asLong() < min || v.asLong() > max) {
            throw bad(at + "." + key, "must be an integer in [" + min + ", " + max + "], got " + v);
        }
        return Optional.of(v.asInt());
    }

    Optional<Double> number(String key, double min, double max) {
        JsonNode v = node.get(key);
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        if (!v.isNumber() || !(v.asDouble() >= min && v.asDouble() <= max)) {
            throw bad(at + "." + key, "must be a number in [" + min + ", " + max + "], got " + v);
        }
        return Optional.of(v.asDouble());
    }

    /**
     * An exact decimal: a decimal string (the canonical profile writes money so) or a JSON number; empty when absent.
     */
    Optional<java.math.BigDecimal> decimal(String key) {
        JsonNode v = node.get(key);
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        try {
            if (v.isTextual() || v.isNumber()) {
                return Optional.of(new java.math.BigDecimal(v.asText()));
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw bad(at + "." + key, "must be a decimal number, got " + v);
    }

    /** A JSON Schema (a mapping), compiled; empty when absent. */
    Optional<CompiledSchema> schema(String key) {
        JsonNode v = node.get(key);
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        if (!v.isObject()) {
            throw bad(at + "." + key, "must be a JSON Schema (an object)");
        }
        Optional<String> problem = CompiledSchema.problem(v);
        if (problem.isPresent()) {
            throw bad(at + "." + key, "is not a usable JSON Schema: " + problem.get());
        }
        return Optional.of(CompiledSchema.compile(v));
    }

    /** A non-empty list of objects, each read as its own {@code Params}; empty when absent. */
    Optional<List<Params>> objects(String key) {
        JsonNode v = node.get(key);
        if (v == null || v.isNull()) {
            return Optional.empty();
        }
        if (!v.isArray() || v.isEmpty()) {
            throw bad(at + "." + key, "must be a non-empty list of objects");
        }
        List<Params> out = new ArrayList<>();
        for (int i = 0; i < v.size(); i++) {
            out.add(of(v.get(i), at + "." + key + "[" + i + "]"));
        }
        return Optional.of(out);
    }

    boolean bool(String key, boolean dflt) {
        JsonNode v = node.get(key);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw bad(at + "." + key, "must be true or false, got " + v);
        }
        return v.asBoolean();
    }

    List<String> argv(String key) {
        JsonNode v = node.get(key);
        if (v == null || !v.isArray() || v.isEmpty()) {
            throw bad(at + "." + key, "must be a non-empty list (program, then arguments)");
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < v.size(); i++) {
            JsonNode s = v.get(i);
            if (!s.isTextual() || s.asText().isEmpty()) {
                throw bad(at + "." + key + "[" + i + "]", "must be a non-empty string");
            }
            out.add(s.asText());
        }
        return List.copyOf(out);
    }

    Map<String, String> env(String key) {
        JsonNode v = node.get(key);
        if (v == null || v.isNull()) {
            return Map.of();
        }
        if (!v.isObject()) {
            throw bad(at + "." + key, "must be an object of variable names to strings");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : v.properties()) {
            if (!e.getKey().matches("[A-Za-z_][A-Za-z0-9_]*") || !e.getValue().isTextual()) {
                throw bad(at + "." + key + "." + e.getKey(), "must be a variable name mapped to a string");
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    static InvalidInputException bad(String path, String what) {
        return new InvalidInputException("run configuration " + path + ": " + what
                + "; the configuration is damaged or was written by another Vigilo version");
    }
}
