package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.config.AttemptLimits;
import dev.vigilo.config.CasePlaceholders;
import dev.vigilo.config.CompiledSchema;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import dev.vigilo.config.Template;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads a profile's {@code agent} (docs/formats/plan-profile.md): a {@code command} or an {@code http} agent and
 * their parameters, in the canonical form the profile's identity is computed over. A parameter written only when
 * given stays out of the canonical form when absent, so profiles written before it existed keep their identity.
 */
final class AgentReader {
    private static final KeyPath AGENT = KeyPath.root().key("agent");
    private static final Map<String, Profile.AgentKind> KINDS = kinds();
    private static final Map<String, String> ROLES = roles();
    /** The most turns of a {@code messages} template. */
    private static final int MAX_MESSAGES = 64;
    /** The most tools of an agent. */
    private static final int MAX_TOOLS = 64;
    /** The most MCP servers of an agent. */
    private static final int MAX_MCP_SERVERS = 16;
    /** The most model calls of one attempt with tools. */
    private static final int MAX_TURNS = 1000;
    /** A tool's name: what OpenAI-compatible endpoints accept as a function name. */
    private static final Pattern TOOL_NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    private final ProfileFields fields;
    private final ConfigReader reader;

    AgentReader(ProfileFields fields) {
        this.fields = fields;
        this.reader = fields.reader();
    }

    Profile.Agent agent(JsonNode node) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        Profile.Agent fallback = new Profile.Agent(Profile.AgentKind.COMMAND, out);
        if (node == null) {
            reader.problem(AGENT, "is required: give kind: command or kind: http");
            return fallback;
        }
        if (reader.mapping(node, AGENT).isEmpty()) {
            return fallback;
        }
        Optional<Profile.AgentKind> kind = reader.oneOf(node.get("kind"), AGENT.key("kind"), true, "agent kind", KINDS);
        if (kind.isEmpty()) {
            return fallback;
        }
        return switch (kind.get()) {
            case COMMAND -> command(node, out);
            case HTTP -> http(node, out);
        };
    }

    private Profile.Agent command(JsonNode node, ObjectNode out) {
        reader.allowKeys(
                node,
                AGENT,
                List.of("kind", "command", "timeout_seconds", "env", "api_key_env", "max_attempts", "seed_per_epoch"));
        if (node.has("seed_per_epoch")) {
            reader.problem(
                    AGENT.key("seed_per_epoch"),
                    "is for http agents (it sends the epoch as the request's seed); a command agent reads its epoch"
                            + " from VIGILO_EPOCH: remove the key");
        }
        out.set("command", fields.argv(node.get("command"), AGENT.key("command")));
        out.put(
                "timeout_seconds",
                reader.integer(node.get("timeout_seconds"), AGENT.key("timeout_seconds"), 1, 3600, 300));
        out.set("env", fields.env(node.get("env"), AGENT.key("env")));
        // Written only when given: profiles without it keep their canonical bytes and identity.
        String keyEnv = fields.keyEnv(node.get("api_key_env"), AGENT.key("api_key_env"));
        if (keyEnv != null) {
            out.put("api_key_env", keyEnv);
        }
        maxAttempts(node, out);
        return new Profile.Agent(Profile.AgentKind.COMMAND, out);
    }

    private Profile.Agent http(JsonNode node, ObjectNode out) {
        reader.allowKeys(
                node,
                AGENT,
                List.of(
                        "kind",
                        "url",
                        "model",
                        "api_key_env",
                        "timeout_seconds",
                        "connect_timeout_seconds",
                        "max_tokens",
                        "temperature",
                        "system_prompt",
                        "messages",
                        "max_attempts",
                        "seed_per_epoch",
                        "cache",
                        "tools",
                        "max_turns",
                        "parallel_tool_calls",
                        "mcp_servers",
                        "rate_limit",
                        "circuit_breaker"));
        String url = fields.text(node.get("url"), AGENT.key("url"), true);
        if (url != null) {
            fields.endpointUrl(url, AGENT.key("url"));
            out.put("url", url);
        }
        out.put("model", fields.text(node.get("model"), AGENT.key("model"), true));
        out.put("api_key_env", fields.keyEnv(node.get("api_key_env"), AGENT.key("api_key_env")));
        out.put(
                "timeout_seconds",
                reader.integer(node.get("timeout_seconds"), AGENT.key("timeout_seconds"), 1, 3600, 120));
        out.put(
                "connect_timeout_seconds",
                reader.integer(node.get("connect_timeout_seconds"), AGENT.key("connect_timeout_seconds"), 1, 300, 10));
        JsonNode mt = node.get("max_tokens");
        if (mt != null) {
            out.put("max_tokens", reader.integer(mt, AGENT.key("max_tokens"), 1, 1_000_000, 0));
        }
        fields.number(node.get("temperature"), AGENT.key("temperature"), 0, 2)
                .ifPresent(t -> out.put("temperature", t));
        String sp = fields.text(node.get("system_prompt"), AGENT.key("system_prompt"), false);
        if (sp != null) {
            out.put("system_prompt", sp);
        }
        // Written only when given, like system_prompt: profiles without it keep their canonical bytes and identity.
        if (node.get("messages") != null) {
            if (node.get("system_prompt") != null) {
                reader.problem(
                        AGENT.key("messages"),
                        "is given beside system_prompt; put the system prompt in messages as {role: system,"
                                + " content: ...} and remove system_prompt");
            }
            out.set("messages", messages(node.get("messages"), AGENT.key("messages")));
        }
        maxAttempts(node, out);
        // Written only when asked for, like max_attempts: profiles without it keep their identity.
        if (reader.bool(node.get("seed_per_epoch"), AGENT.key("seed_per_epoch"), false)) {
            out.put("seed_per_epoch", true);
        }
        // Off by default (docs/formats/agent-protocol.md "Answer cache"): an evaluation measures the agent, and a
        // cached answer measures an earlier call of it. Written only when on, so other profiles keep their identity.
        if (reader.bool(node.get("cache"), AGENT.key("cache"), false)) {
            out.put("cache", true);
        }
        tools(node, out);
        new EndpointLimitReader(reader).read(node, AGENT, out);
        return new Profile.Agent(Profile.AgentKind.HTTP, out);
    }

    /**
     * An http agent's {@code tools}, {@code mcp_servers}, {@code max_turns} and {@code parallel_tool_calls}
     * (docs/formats/agent-protocol.md, "Tools"), written only when tools or MCP servers are given (then the turn keys
     * too, defaults filled in), so profiles without tools
     * keep their canonical bytes and identity. Each tool: a unique function name, an optional description, the JSON
     * Schema of its arguments (an object schema, checked with the validator workers check arguments with, keys
     * sorted), its command, timeout and environment.
     */
    private void tools(JsonNode node, ObjectNode out) {
        JsonNode given = node.get("tools");
        if (given == null && node.get("mcp_servers") == null) {
            for (String key : List.of("max_turns", "parallel_tool_calls")) {
                if (node.get(key) != null) {
                    reader.problem(
                            AGENT.key(key), "is for an agent with tools; add tools (or mcp_servers) or remove the key");
                }
            }
            return;
        }
        if (given != null) {
            commandTools(given, out);
        }
        if (node.get("mcp_servers") != null) {
            out.set("mcp_servers", mcpServers(node.get("mcp_servers"), AGENT.key("mcp_servers")));
        }
        out.put("max_turns", reader.integer(node.get("max_turns"), AGENT.key("max_turns"), 1, MAX_TURNS, 10));
        out.put(
                "parallel_tool_calls",
                reader.bool(node.get("parallel_tool_calls"), AGENT.key("parallel_tool_calls"), true));
        if (node.get("cache") != null && node.get("cache").asBoolean(false)) {
            reader.problem(
                    AGENT.key("cache"),
                    "cannot be used with tools: an attempt with tools is a conversation of several requests; remove"
                            + " cache");
        }
    }

    /**
     * An http agent's {@code mcp_servers} (docs/formats/agent-protocol.md, "MCP servers"), written only when given:
     * each a unique server name (its own namespace: the tools a server offers are named by the server, and a tool
     * name offered twice is found when an attempt lists them), its command, environment and per-call
     * {@code timeout_seconds} (default 60).
     */
    private ArrayNode mcpServers(JsonNode given, KeyPath at) {
        ArrayNode servers = JsonNodeFactory.instance.arrayNode();
        Optional<JsonNode> list = fields.entries(given, at, "MCP server", "mcp_servers", MAX_MCP_SERVERS);
        Set<String> names = new HashSet<>();
        for (int i = 0; list.isPresent() && i < list.get().size(); i++) {
            JsonNode m = list.get().get(i);
            KeyPath mAt = at.index(i);
            if (reader.mapping(m, mAt).isEmpty()) {
                continue;
            }
            reader.allowKeys(m, mAt, List.of("name", "command", "env", "timeout_seconds"));
            String name = fields.text(m.get("name"), mAt.key("name"), true);
            if (name != null && !TOOL_NAME.matcher(name).matches()) {
                reader.problem(
                        mAt.key("name"),
                        "\"" + name + "\" is not a valid MCP server name: use 1..64 letters, digits, '_' or '-'");
            } else if (name != null && !names.add(name)) {
                reader.problem(
                        mAt.key("name"), "duplicate MCP server name \"" + name + "\"; server names must be unique");
            }
            ObjectNode server = servers.addObject().put("name", name);
            server.set("command", fields.argv(m.get("command"), mAt.key("command")));
            server.set("env", fields.env(m.get("env"), mAt.key("env")));
            server.put(
                    "timeout_seconds",
                    reader.integer(m.get("timeout_seconds"), mAt.key("timeout_seconds"), 1, 3600, 60));
        }
        return servers;
    }

    /** The command {@code tools} entries, into {@code out.tools}. */
    private void commandTools(JsonNode given, ObjectNode out) {
        KeyPath at = AGENT.key("tools");
        ArrayNode tools = out.putArray("tools");
        Optional<JsonNode> list = fields.entries(given, at, "tool", "tools", MAX_TOOLS);
        Set<String> names = new HashSet<>();
        for (int i = 0; list.isPresent() && i < list.get().size(); i++) {
            JsonNode t = list.get().get(i);
            KeyPath tAt = at.index(i);
            if (reader.mapping(t, tAt).isEmpty()) {
                continue;
            }
            reader.allowKeys(t, tAt, List.of("name", "description", "parameters", "command", "timeout_seconds", "env"));
            String name = fields.text(t.get("name"), tAt.key("name"), true);
            if (name != null && !TOOL_NAME.matcher(name).matches()) {
                reader.problem(
                        tAt.key("name"),
                        "\"" + name + "\" is not a valid tool name: use 1..64 letters, digits, '_' or '-'");
            } else if (name != null && !names.add(name)) {
                reader.problem(tAt.key("name"), "duplicate tool name \"" + name + "\"; tool names must be unique");
            }
            ObjectNode tool = tools.addObject().put("name", name);
            String description = fields.text(t.get("description"), tAt.key("description"), false);
            if (description != null) {
                tool.put("description", description);
            }
            tool.set("parameters", parameters(t.get("parameters"), tAt.key("parameters")));
            tool.set("command", fields.argv(t.get("command"), tAt.key("command")));
            tool.put(
                    "timeout_seconds",
                    reader.integer(t.get("timeout_seconds"), tAt.key("timeout_seconds"), 1, 3600, 30));
            tool.set("env", fields.env(t.get("env"), tAt.key("env")));
        }
    }

    /**
     * A tool's {@code parameters}: a mapping the validator accepts as a JSON Schema, of {@code type: object} (the
     * arguments of a function call are an object), keys sorted; {@code {"type":"object"}} when absent.
     */
    private JsonNode parameters(JsonNode node, KeyPath at) {
        if (node == null) {
            return JsonNodeFactory.instance.objectNode().put("type", "object");
        }
        if (!node.isObject()) {
            reader.problem(at, "must be a mapping (a JSON Schema), got " + ConfigReader.typeOf(node));
            return JsonNodeFactory.instance.objectNode().put("type", "object");
        }
        Optional<String> problem = CompiledSchema.problem(node);
        if (problem.isPresent()) {
            reader.problem(at, "is not a usable JSON Schema: " + problem.get());
        } else if (!"object".equals(node.path("type").asText())) {
            reader.problem(at, "must be a schema of type: object (a tool's arguments are a JSON object)");
        }
        return EvaluatorReader.sorted(node);
    }

    /**
     * An http agent's {@code messages}: a non-empty list of {@code {role, content}} (role system, user or assistant,
     * at least one user), each content a {@link Template} whose placeholders are {@link CasePlaceholders} (an unknown
     * one is a problem at the content). Written as given: {@code [{"role":..,"content":..}, ...]}.
     */
    private ArrayNode messages(JsonNode node, KeyPath at) {
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        Optional<JsonNode> list = fields.entries(node, at, "message", "messages", MAX_MESSAGES);
        if (list.isEmpty()) {
            return out;
        }
        boolean user = false;
        boolean rolesRead = true;
        for (int i = 0; i < list.get().size(); i++) {
            JsonNode m = list.get().get(i);
            KeyPath mAt = at.index(i);
            if (reader.mapping(m, mAt).isEmpty()) {
                continue;
            }
            reader.allowKeys(m, mAt, List.of("role", "content"));
            String role = reader.oneOf(m.get("role"), mAt.key("role"), true, "role", ROLES)
                    .orElse(null);
            String content = fields.text(m.get("content"), mAt.key("content"), true);
            if (content != null) {
                Template.of(content).placeholders().stream()
                        .distinct()
                        .map(CasePlaceholders::problem)
                        .flatMap(Optional::stream)
                        .forEach(problem -> reader.problem(mAt.key("content"), problem));
            }
            user |= "user".equals(role);
            rolesRead &= role != null;
            out.addObject().put("role", role).put("content", content);
        }
        // Not beside a role that could not be read: that problem is the one to fix.
        if (!user && rolesRead && !out.isEmpty()) {
            reader.problem(at, "needs at least one user message (role: user)");
        }
        return out;
    }

    /**
     * {@code max_attempts}, written to the canonical form only when it differs from the default: profiles that
     * do not mention it (all profiles written before it existed) keep their canonical bytes and identity, and
     * giving the default explicitly means the same profile.
     */
    private void maxAttempts(JsonNode node, ObjectNode out) {
        int attempts = reader.integer(
                node.get("max_attempts"),
                AGENT.key("max_attempts"),
                1,
                AttemptLimits.MAX_ATTEMPTS,
                AttemptLimits.DEFAULT_MAX_ATTEMPTS);
        if (attempts != AttemptLimits.DEFAULT_MAX_ATTEMPTS) {
            out.put("max_attempts", attempts);
        }
    }

    private static Map<String, String> roles() {
        Map<String, String> roles = new LinkedHashMap<>();
        for (String r : List.of("system", "user", "assistant")) {
            roles.put(r, r);
        }
        return roles;
    }

    private static Map<String, Profile.AgentKind> kinds() {
        Map<String, Profile.AgentKind> kinds = new LinkedHashMap<>();
        for (Profile.AgentKind k : Profile.AgentKind.values()) {
            kinds.put(k.wire(), k);
        }
        return kinds;
    }
}
