package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.SecretValues;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/** Configuration and case builders shared by this module's tests. */
final class TestSupport {
    static final ObjectMapper MAPPER = new ObjectMapper();

    private TestSupport() {}

    /** The worker environment of a test: real variables, {@code dir} as working and scratch directory, short waits. */
    static AgentEnvironment env(Path dir) {
        return new AgentEnvironment(
                System.getenv(),
                dir,
                dir,
                Duration.ofMillis(10),
                Duration.ofMillis(50),
                Duration.ofSeconds(5),
                AgentEnvironment.DEFAULT_REGEX_TIME_LIMIT,
                SecretValues.NONE);
    }

    /** {@code env} plus one variable. */
    static AgentEnvironment withVariable(AgentEnvironment env, String name, String value) {
        Map<String, String> v = new HashMap<>(env.variables());
        v.put(name, value);
        return env.withVariables(v);
    }

    /** A command agent configuration running {@code sh -c script}. */
    static ObjectNode shAgent(String script) {
        return commandAgent("sh", "-c", script);
    }

    /** A command agent configuration. */
    static ObjectNode commandAgent(String... argv) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("kind", "command");
        ArrayNode a = n.putArray("command");
        for (String s : argv) {
            a.add(s);
        }
        n.put("timeout_seconds", 30);
        n.putObject("env");
        return n;
    }

    /** A case line with this id, input and expected (expected omitted when null). */
    static CaseRecord caseOf(String id, Object input, Object expected) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("id", id);
        n.set("input", MAPPER.valueToTree(input));
        if (expected != null) {
            n.set("expected", MAPPER.valueToTree(expected));
        }
        return caseOf(id, json(n));
    }

    /** A case with exactly these bytes. */
    static CaseRecord caseOf(String id, String json) {
        return new CaseRecord(id, 0, json.getBytes(StandardCharsets.UTF_8));
    }

    static String json(JsonNode n) {
        try {
            return MAPPER.writeValueAsString(n);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode parse(String json) {
        try {
            return MAPPER.readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Single quotes become double quotes: readable JSON in Java strings. */
    static JsonNode q(String singleQuotedJson) {
        return parse(singleQuotedJson.replace('\'', '"'));
    }
}
