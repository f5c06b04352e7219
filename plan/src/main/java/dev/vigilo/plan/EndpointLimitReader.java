package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import java.util.List;

/**
 * Reads a model endpoint's {@code rate_limit} and {@code circuit_breaker} (an http agent's, a judge's, a panel
 * judge's; docs/formats/plan-profile.md, "Endpoint limits") into the canonical form: each written only when given,
 * so profiles without them keep their canonical bytes and identity. {@code rate_limit} keeps the keys given (at
 * least one); {@code circuit_breaker} is written with its defaults filled in.
 */
final class EndpointLimitReader {
    /** The keys this reader owns, for the callers' allowed keys. */
    static final List<String> KEYS = List.of("rate_limit", "circuit_breaker");

    static final int MAX_REQUESTS_PER_MINUTE = 1_000_000;
    static final int MAX_TOKENS_PER_MINUTE = 1_000_000_000;
    static final int MAX_IN_FLIGHT = 10_000;
    /** Consecutive failures that open the circuit when {@code circuit_breaker.failures} is not given. */
    static final int DEFAULT_FAILURES = 5;
    /** The circuit's cool-down when {@code circuit_breaker.cool_down_seconds} is not given. */
    static final int DEFAULT_COOL_DOWN_SECONDS = 30;

    private final ConfigReader reader;

    EndpointLimitReader(ConfigReader reader) {
        this.reader = reader;
    }

    /** Reads {@code node}'s limit keys (the endpoint's mapping at {@code at}) into {@code out}. */
    void read(JsonNode node, KeyPath at, ObjectNode out) {
        JsonNode rate = node.get("rate_limit");
        KeyPath rat = at.key("rate_limit");
        if (rate != null && reader.mapping(rate, rat).isPresent()) {
            reader.allowKeys(rate, rat, List.of("requests_per_minute", "tokens_per_minute", "max_in_flight"));
            ObjectNode o = out.putObject("rate_limit");
            if (rate.isEmpty()) {
                reader.problem(rat, "is empty; give requests_per_minute, tokens_per_minute or max_in_flight");
            }
            positive(rate, rat, "requests_per_minute", MAX_REQUESTS_PER_MINUTE, o);
            positive(rate, rat, "tokens_per_minute", MAX_TOKENS_PER_MINUTE, o);
            positive(rate, rat, "max_in_flight", MAX_IN_FLIGHT, o);
        }
        JsonNode breaker = node.get("circuit_breaker");
        KeyPath bat = at.key("circuit_breaker");
        if (breaker != null && reader.mapping(breaker, bat).isPresent()) {
            reader.allowKeys(breaker, bat, List.of("failures", "cool_down_seconds"));
            ObjectNode o = out.putObject("circuit_breaker");
            o.put("failures", reader.integer(breaker.get("failures"), bat.key("failures"), 1, 1000, DEFAULT_FAILURES));
            o.put(
                    "cool_down_seconds",
                    reader.integer(
                            breaker.get("cool_down_seconds"),
                            bat.key("cool_down_seconds"),
                            1,
                            3600,
                            DEFAULT_COOL_DOWN_SECONDS));
        }
    }

    private void positive(JsonNode rate, KeyPath at, String key, int max, ObjectNode out) {
        JsonNode v = rate.get(key);
        if (v != null) {
            out.put(key, reader.integer(v, at.key(key), 1, max, 1));
        }
    }
}
