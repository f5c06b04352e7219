package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;

/**
 * Reads a profile's optional {@code limits} (docs/formats/plan-profile.md): {@code max_cases}, the most cases a run
 * of the profile selects ({@link Profile.Limits#DEFAULT_MAX_CASES} when not given), and the per-case limits
 * {@code case_seconds}, {@code case_tokens} and {@code case_cost_usd}, absent unless given.
 */
final class LimitReader {
    private static final KeyPath LIMITS = KeyPath.root().key("limits");

    private final ConfigReader reader;

    LimitReader(ConfigReader reader) {
        this.reader = reader;
    }

    Profile.Limits limits(JsonNode node) {
        if (node == null) {
            return new Profile.Limits(Profile.Limits.DEFAULT_MAX_CASES);
        }
        if (reader.mapping(node, LIMITS).isEmpty()) {
            return new Profile.Limits(1);
        }
        reader.allowKeys(node, LIMITS, List.of("max_cases", "case_seconds", "case_tokens", "case_cost_usd"));
        long maxCases = Profile.Limits.DEFAULT_MAX_CASES;
        JsonNode mc = node.get("max_cases");
        if (mc != null) {
            long max = reader.longInteger(mc, LIMITS.key("max_cases"), 1, Profile.Limits.MAX_MAX_CASES, 0);
            maxCases = max < 1 ? 1 : max;
        }
        Optional<Long> seconds = positive(node, "case_seconds", Profile.Limits.MAX_CASE_SECONDS);
        Optional<Long> tokens = positive(node, "case_tokens", Profile.Limits.MAX_CASE_TOKENS);
        Optional<BigDecimal> cost = reader.decimal(
                        node.get("case_cost_usd"), LIMITS.key("case_cost_usd"), false, BigDecimal.ZERO)
                .flatMap(d -> {
                    if (d.signum() == 0) {
                        reader.problem(LIMITS.key("case_cost_usd"), "must be greater than 0");
                        return Optional.empty();
                    }
                    return Optional.of(d);
                });
        return new Profile.Limits(maxCases, seconds, tokens, cost);
    }

    private Optional<Long> positive(JsonNode limits, String key, long max) {
        JsonNode n = limits.get(key);
        if (n == null) {
            return Optional.empty();
        }
        long v = reader.longInteger(n, LIMITS.key(key), 1, max, 0);
        return v < 1 ? Optional.empty() : Optional.of(v);
    }
}
