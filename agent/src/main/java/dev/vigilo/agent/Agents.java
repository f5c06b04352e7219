package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.InvalidInputException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/** Builds the {@link Agent} a run configuration's {@code agent} object describes. */
public final class Agents {
    /** Attempts per call when the profile gives no {@code max_attempts}. */
    public static final int DEFAULT_MAX_ATTEMPTS = 3;
    /** The most attempts per call a profile may ask for. */
    public static final int MAX_ATTEMPTS = 10;

    private Agents() {}

    /**
     * Builds the agent of a run configuration (docs/formats/plan-configuration.md, {@code agent}: {@code kind} and
     * the parameters of docs/formats/plan-profile.md).
     *
     * <p>Checks up front what can be checked before any case: the parameters, and for {@code http} that the
     * {@code api_key_env} variable is set. A command's program is looked up on each call (it may appear later), so a
     * missing program is an {@link AgentErrorType#AGENT_NOT_FOUND} outcome, not an exception here.
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
                        env);
            case "http" -> http(p, maxAttempts, env);
            default -> throw Params.bad("agent.kind", "unknown agent kind \"" + kind + "\" (known: command, http)");
        };
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
        Optional<String> keyEnv = p.optionalText("api_key_env");
        Optional<String> key = Optional.empty();
        if (keyEnv.isPresent()) {
            String value = env.variables().get(keyEnv.get());
            if (value == null || value.isEmpty()) {
                throw new InvalidInputException("agent.api_key_env: environment variable " + keyEnv.get()
                        + " is not set; export it with the endpoint's API key before running the worker");
            }
            key = Optional.of(value);
        }
        HttpAgent.Settings s = new HttpAgent.Settings(
                uri,
                p.text("model"),
                keyEnv,
                key,
                p.optionalText("system_prompt"),
                p.optionalInteger("max_tokens", 1, 1_000_000),
                p.number("temperature", 0, 2),
                Duration.ofSeconds(p.integer("timeout_seconds", 1, 3600, 120)),
                Duration.ofSeconds(p.integer("connect_timeout_seconds", 1, 300, 10)),
                maxAttempts);
        return new HttpAgent(s, env);
    }
}
