package dev.vigilo.agent;

/**
 * Token counts an OpenAI-compatible endpoint reported for one successful answer ({@code usage} of the response).
 * A count the endpoint did not report is 0.
 *
 * @param promptTokens     {@code usage.prompt_tokens}
 * @param completionTokens {@code usage.completion_tokens}
 * @param totalTokens      {@code usage.total_tokens}
 */
public record TokenUsage(long promptTokens, long completionTokens, long totalTokens) {
    public TokenUsage {
        if (promptTokens < 0 || completionTokens < 0 || totalTokens < 0) {
            throw new IllegalArgumentException("token counts must be >= 0");
        }
    }
}
