package dev.vigilo.agent;

import java.util.Objects;

/**
 * Token counts an OpenAI-compatible endpoint reported for one answer ({@code usage} of the response), with the model
 * it answered as. A count the endpoint did not report is 0. Cost is priced per {@link #model} (a run's
 * {@code pricing}, docs/formats/plan-profile.md), so the model is the one the endpoint names in its answer's
 * {@code model}, or the one requested when the answer names none.
 *
 * @param model              the model, as the endpoint reports it
 * @param promptTokens       {@code usage.prompt_tokens}
 * @param completionTokens   {@code usage.completion_tokens}
 * @param totalTokens        {@code usage.total_tokens}
 * @param cachedPromptTokens {@code usage.prompt_tokens_details.cached_tokens} (at most {@code promptTokens})
 */
public record TokenUsage(
        String model, long promptTokens, long completionTokens, long totalTokens, long cachedPromptTokens) {
    public TokenUsage {
        Objects.requireNonNull(model, "model");
        if (promptTokens < 0 || completionTokens < 0 || totalTokens < 0 || cachedPromptTokens < 0) {
            throw new IllegalArgumentException("token counts must be >= 0");
        }
        if (cachedPromptTokens > promptTokens) {
            throw new IllegalArgumentException("cached prompt tokens cannot exceed prompt tokens");
        }
    }
}
