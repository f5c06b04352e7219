package dev.vigilo.llm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/**
 * An answer's token counts ({@code usage}): never negative; {@code total} is {@code total_tokens}, or prompt plus
 * completion when the endpoint leaves it out; {@code cachedPromptTokens} is
 * {@code usage.prompt_tokens_details.cached_tokens} (the part of the prompt the provider served from its prompt
 * cache, priced apart by some), 0 when not reported.
 */
public record Usage(long promptTokens, long completionTokens, long totalTokens, long cachedPromptTokens) {
    public Usage {
        if (promptTokens < 0 || completionTokens < 0 || totalTokens < 0 || cachedPromptTokens < 0) {
            throw new IllegalArgumentException("token counts must be >= 0");
        }
    }

    /** Counts without cached prompt tokens. */
    public Usage(long promptTokens, long completionTokens, long totalTokens) {
        this(promptTokens, completionTokens, totalTokens, 0);
    }

    /** The counts of a {@code usage} object; empty when {@code usage} is absent or not an object. */
    public static Optional<Usage> of(JsonNode usage) {
        if (usage == null || !usage.isObject()) {
            return Optional.empty();
        }
        long p = Math.max(0, usage.path("prompt_tokens").asLong(0));
        long c = Math.max(0, usage.path("completion_tokens").asLong(0));
        long t = Math.max(0, usage.path("total_tokens").asLong(p + c));
        // A provider reporting more cached than prompt tokens is wrong; the cached part never exceeds the prompt.
        long cached = Math.min(
                p,
                Math.max(
                        0,
                        usage.path("prompt_tokens_details")
                                .path("cached_tokens")
                                .asLong(0)));
        return Optional.of(new Usage(p, c, t, cached));
    }
}
