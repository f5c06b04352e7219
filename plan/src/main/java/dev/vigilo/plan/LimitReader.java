package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import java.util.List;

/**
 * Reads a profile's optional {@code limits} (docs/formats/plan-profile.md): today {@code max_cases}, the most cases
 * a run of the profile selects, {@link Profile.Limits#DEFAULT_MAX_CASES} when not given.
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
        reader.allowKeys(node, LIMITS, List.of("max_cases"));
        JsonNode mc = node.get("max_cases");
        if (mc == null) {
            return new Profile.Limits(Profile.Limits.DEFAULT_MAX_CASES);
        }
        long max = reader.longInteger(mc, LIMITS.key("max_cases"), 1, Profile.Limits.MAX_MAX_CASES, 0);
        return new Profile.Limits(max < 1 ? 1 : max);
    }
}
