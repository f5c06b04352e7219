package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.config.AttemptLimits;
import dev.vigilo.config.CasePlaceholders;
import dev.vigilo.config.Template;
import dev.vigilo.llm.ChatLimiter;
import dev.vigilo.llm.ChatTool;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** Builds the {@link Agent} a run configuration's {@code agent} object describes. */
public final class Agents {
    /** Attempts per call when the profile gives no {@code max_attempts} (the profile reader's rule too). */
    public static final int DEFAULT_MAX_ATTEMPTS = AttemptLimits.DEFAULT_MAX_ATTEMPTS;
    /** The most attempts per call a profile may ask for. */
    public static final int MAX_ATTEMPTS = AttemptLimits.MAX_ATTEMPTS;

    /** Model calls per attempt of an http agent with tools when the profile gives no {@code max_turns}. */
    public static final int DEFAULT_MAX_TURNS = 10;
    /** The most {@code max_turns} a profile may ask for. */
    public static final int MAX_TURNS = 1000;
    /** A tool's {@code timeout_seconds} when none is given. */
    public static final int DEFAULT_TOOL_TIMEOUT_SECONDS = 30;
    /** An MCP server's {@code timeout_seconds} (per call) when none is given. */
    public static final int DEFAULT_MCP_TIMEOUT_SECONDS = 60;
    /** A tool's name: what OpenAI-compatible endpoints accept as a function name. */
    static final java.util.regex.Pattern TOOL_NAME = java.util.regex.Pattern.compile("[A-Za-z0-9_-]{1,64}");

    private Agents() {}

    /**
     * Builds the agent of a run configuration (docs/formats/plan-configuration.md, {@code agent}: {@code kind} and
     * the parameters of docs/formats/plan-profile.md).
     *
     * <p>Checks up front what can be checked before any case: the parameters, and that the {@code api_key_env}
     * variable is set when one is named (an {@code http} agent sends it; a {@code command} agent names the key it uses
     * itself). That value is masked in everything the agent hands on, besides {@code env}'s secrets. A command's
     * program is looked up on each call (it may appear later), so a missing program is an
     * {@link AgentErrorType#AGENT_NOT_FOUND} outcome, not an exception here.
     *
     * @param agentConfig the configuration's {@code agent} object
     * @param env         the worker's environment
     * @return a new agent; close it when the run ends
     * @throws InvalidInputException naming the offending key or variable
     */
    public static Agent create(JsonNode agentConfig, AgentEnvironment env) {
        Objects.requireNonNull(env, "env");
        Params p = Params.of(agentConfig, "agent");
        String kind = p.text("kind");
        int maxAttempts = p.integer("max_attempts", 1, MAX_ATTEMPTS, DEFAULT_MAX_ATTEMPTS);
        return switch (kind) {
            case "command" ->
                new CommandAgent(
                        p.argv("command"),
                        Duration.ofSeconds(p.integer("timeout_seconds", 1, 3600, 300)),
                        p.env("env"),
                        maxAttempts,
                        withKey(p, env).env());
            case "http" -> http(p, maxAttempts, env);
            default -> throw Params.bad("agent.kind", "unknown agent kind \"" + kind + "\" (known: command, http)");
        };
    }

    /** The environment with the agent's own key masked too, and the key; the variable must be set. */
    private record Keyed(AgentEnvironment env, Optional<String> key) {}

    private static Keyed withKey(Params p, AgentEnvironment env) {
        Optional<String> keyEnv = p.optionalText("api_key_env");
        if (keyEnv.isEmpty()) {
            return new Keyed(env, Optional.empty());
        }
        String value = env.variables().get(keyEnv.get());
        if (value == null || value.isEmpty()) {
            throw new InvalidInputException("agent.api_key_env: environment variable " + keyEnv.get()
                    + " is not set; export it with the endpoint's API key before running the worker");
        }
        return new Keyed(env.withSecrets(env.secrets().and(value)), Optional.of(value));
    }

    /** The {@code messages} template, checked as the profile reader checks it (same placeholder rule). */
    private static Optional<List<HttpAgent.Turn>> messages(Params p) {
        Optional<List<Params>> turns = p.objects("messages");
        if (turns.isEmpty()) {
            return Optional.empty();
        }
        if (p.optionalText("system_prompt").isPresent()) {
            throw Params.bad("agent.messages", "is given beside system_prompt");
        }
        List<HttpAgent.Turn> out = new ArrayList<>();
        for (Params turn : turns.get()) {
            String role = turn.text("role");
            if (!List.of("system", "user", "assistant").contains(role)) {
                throw Params.bad(turn.at() + ".role", "must be system, user or assistant, got \"" + role + "\"");
            }
            Template content = Template.of(turn.text("content"));
            CasePlaceholders.problem(content).ifPresent(problem -> {
                throw Params.bad(turn.at() + ".content", problem);
            });
            out.add(new HttpAgent.Turn(role, content));
        }
        if (out.stream().noneMatch(t -> t.role().equals("user"))) {
            throw Params.bad("agent.messages", "needs at least one user message");
        }
        return Optional.of(List.copyOf(out));
    }

    private static Agent http(Params p, int maxAttempts, AgentEnvironment env) {
        String url = p.text("url");
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw Params.bad("agent.url", "is not a URL");
        }
        if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
            throw Params.bad("agent.url", "must be an http:// or https:// URL with a host");
        }
        Keyed keyed = withKey(p, env);
        HttpAgent.Settings s = new HttpAgent.Settings(
                uri,
                p.text("model"),
                p.optionalText("api_key_env"),
                keyed.key(),
                p.optionalText("system_prompt"),
                messages(p),
                p.optionalInteger("max_tokens", 1, 1_000_000),
                p.number("temperature", 0, 2),
                Duration.ofSeconds(p.integer("timeout_seconds", 1, 3600, 120)),
                Duration.ofSeconds(p.integer("connect_timeout_seconds", 1, 300, 10)),
                maxAttempts,
                p.bool("seed_per_epoch", false),
                p.bool("cache", false),
                tools(p, keyed.env()),
                p.integer("max_turns", 1, MAX_TURNS, DEFAULT_MAX_TURNS),
                mcpServers(p));
        if (s.cache() && !(s.tools().isEmpty() && s.mcpServers().isEmpty())) {
            s.tools().close();
            throw Params.bad("agent.cache", "cannot be used with tools");
        }
        ChatLimiter limiter = keyed.env()
                .limiters()
                .limiter(new EndpointLimiters.Endpoint("agent", uri, s.model(), s.apiKeyEnv(), p.node()));
        return new HttpAgent(s, keyed.env(), limiter);
    }

    /**
     * An http agent's {@code mcp_servers} (empty without): each a unique name, its command, environment and
     * per-call {@code timeout_seconds}. Their tools are known only once a server lists them, at an attempt's start.
     */
    private static List<McpServerSpec> mcpServers(Params p) {
        Optional<List<Params>> list = p.objects("mcp_servers");
        if (list.isEmpty()) {
            return List.of();
        }
        List<McpServerSpec> out = new ArrayList<>();
        for (Params m : list.get()) {
            String name = m.text("name");
            if (!TOOL_NAME.matcher(name).matches()) {
                throw Params.bad(m.at() + ".name", "must be 1..64 letters, digits, '_' or '-'");
            }
            if (out.stream().anyMatch(x -> x.name().equals(name))) {
                throw Params.bad(m.at() + ".name", "repeats \"" + name + "\"; MCP server names must be unique");
            }
            out.add(new McpServerSpec(
                    name,
                    m.argv("command"),
                    m.env("env"),
                    Duration.ofSeconds(m.integer("timeout_seconds", 1, 3600, DEFAULT_MCP_TIMEOUT_SECONDS))));
        }
        return List.copyOf(out);
    }

    /**
     * An http agent's {@code tools} ({@link ToolSet#NONE} without), each a {@link CommandTool}: a unique function
     * name, an optional description, the JSON Schema of its arguments, its command, timeout and environment.
     */
    private static ToolSet tools(Params p, AgentEnvironment env) {
        Optional<List<Params>> list = p.objects("tools");
        if (list.isEmpty()) {
            // Without command tools the flag still matters for the tools of mcp_servers.
            return p.bool("parallel_tool_calls", true) ? new ToolSet(List.of(), true) : ToolSet.NONE;
        }
        List<Tool> tools = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (Params t : list.get()) {
            String name = t.text("name");
            if (!TOOL_NAME.matcher(name).matches()) {
                throw Params.bad(t.at() + ".name", "must be 1..64 letters, digits, '_' or '-'");
            }
            if (names.contains(name)) {
                throw Params.bad(t.at() + ".name", "repeats \"" + name + "\"; tool names must be unique");
            }
            names.add(name);
            JsonNode parameters = t.get("parameters");
            if (parameters == null || !parameters.isObject()) {
                throw Params.bad(t.at() + ".parameters", "must be a JSON Schema (an object)");
            }
            t.schema("parameters");
            tools.add(new CommandTool(
                    new ChatTool(name, t.optionalText("description"), parameters),
                    t.argv("command"),
                    Duration.ofSeconds(t.integer("timeout_seconds", 1, 3600, DEFAULT_TOOL_TIMEOUT_SECONDS)),
                    t.env("env"),
                    env));
        }
        return new ToolSet(tools, p.bool("parallel_tool_calls", true));
    }
}
