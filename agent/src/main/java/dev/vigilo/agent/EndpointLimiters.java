package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.llm.ChatLimiter;
import java.net.URI;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Where agents and evaluators get the {@link ChatLimiter} of each model endpoint they call: the one point where a
 * worker plugs in what governs model calls (the fleet's rate limit and circuit breaker, a spend budget). The http
 * agent (each call of its tool loop too), each judge and each judge of a panel ask once, when they are built, and
 * send every call through the limiter they got; a call whose failure the limiter {@linkplain ChatLimiter#resend
 * takes as its own} is sent again without counting an attempt. Several sources combine with {@link #all}.
 */
@FunctionalInterface
public interface EndpointLimiters {
    /** No limits: every endpoint gets {@link ChatLimiter#NONE}. */
    EndpointLimiters NONE = endpoint -> ChatLimiter.NONE;

    /** The limiter of {@code endpoint}; the same endpoint may be asked for more than once. */
    ChatLimiter limiter(Endpoint endpoint);

    /**
     * A model endpoint as a run's configuration names it. {@link #toString()} names no secret (there is none here:
     * the key's variable name only).
     *
     * @param at        where the configuration names it: {@code agent}, {@code evaluators.NAME}, or
     *                  {@code evaluators.NAME.judges.JUDGE} for a panel's judge
     * @param url       the chat completions URL
     * @param model     the model asked
     * @param apiKeyEnv the name of the variable holding its API key, if any
     * @param settings  the configuration object naming it (the agent's, the judge's), where its {@code rate_limit}
     *                  and {@code circuit_breaker} are (docs/formats/plan-profile.md)
     */
    record Endpoint(String at, URI url, String model, Optional<String> apiKeyEnv, JsonNode settings) {
        public Endpoint {
            Objects.requireNonNull(at, "at");
            Objects.requireNonNull(url, "url");
            Objects.requireNonNull(model, "model");
            Objects.requireNonNull(apiKeyEnv, "apiKeyEnv");
            Objects.requireNonNull(settings, "settings");
        }
    }

    /** Every source in {@code sources} at once: an endpoint's limiter is {@link ChatLimiter#all} of theirs. */
    static EndpointLimiters all(List<EndpointLimiters> sources) {
        List<EndpointLimiters> given = List.copyOf(sources);
        return endpoint ->
                ChatLimiter.all(given.stream().map(s -> s.limiter(endpoint)).toList());
    }
}
