package dev.vigilo.llm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/**
 * An answer's token counts ({@code usage}): never negative; {@code total} is {@code total_tokens}, or prompt plus
 * completion when the endpoint leaves it out.
 */
public record Usage(long promptTokens, long completionTokens, long totalTokens) {
    /** The counts of a {@code usage} object; empty when {@code usage} is absent or not an object. */
    public static Optional<Usage> of(JsonNode usage) {
        if (usage == null || !usage.isObject()) {
            return Optional.empty();
        }
        long p = Math.max(0, usage.path("prompt_tokens").asLong(0));
        long c = Math.max(0, usage.path("completion_tokens").asLong(0));
        long t = Math.max(0, usage.path("total_tokens").asLong(p + c));
        return Optional.of(new Usage(p, c, t));
    }
}
