package dev.vigilo.agent;

import java.util.Optional;

/**
 * The token estimate of one model call, for the run's {@link dev.vigilo.llm.ChatLimiter} (a budget reserves it before
 * the call): an upper bound when the call has a {@code max_tokens}. The prompt is counted as the request body's bytes:
 * every token of a byte-level tokenizer covers at least one byte of the text, and the body also holds the JSON around
 * the messages (keys, quotes, the model's name), which more than covers the few tokens a chat template adds per
 * message. The completion is at most {@code max_tokens}; without one it is unknown, counted as 0 (a profile with a
 * budget requires {@code max_tokens}, docs/formats/plan-profile.md).
 */
final class CallEstimate {
    private CallEstimate() {}

    static long tokens(byte[] body, Optional<Integer> maxTokens) {
        return body.length + (long) maxTokens.orElse(0);
    }
}
