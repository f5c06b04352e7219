package dev.vigilo.llm;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One chat completions exchange to send: a POST of {@code body} to {@code uri} with {@code Content-Type} and {@code
 * Accept: application/json}, then {@code headers} in their order, then {@code Authorization: Bearer <apiKey>} when a
 * key is given. {@link #toString()} never shows the key or the body.
 *
 * @param uri           the chat completions endpoint
 * @param body          the request body (JSON, as the caller serialized it: the bytes on the wire)
 * @param headers       extra request headers, sent in this order
 * @param apiKey        the bearer token, if any
 * @param timeout       bound of the whole exchange, from sending to the last byte of the answer
 * @param tokenEstimate tokens the call is expected to use, for a {@link ChatLimiter} (0 when unknown)
 * @param limiter       decides when the call may be sent and hears how it ended
 */
public record ChatCall(
        URI uri,
        byte[] body,
        Map<String, String> headers,
        Optional<String> apiKey,
        Duration timeout,
        long tokenEstimate,
        ChatLimiter limiter) {
    public ChatCall {
        Objects.requireNonNull(uri, "uri");
        Objects.requireNonNull(body, "body");
        headers = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(headers));
        Objects.requireNonNull(apiKey, "apiKey");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(limiter, "limiter");
    }

    /** A call without extra headers, token estimate or limit. */
    public static ChatCall of(URI uri, byte[] body, Optional<String> apiKey, Duration timeout) {
        return new ChatCall(uri, body, Map.of(), apiKey, timeout, 0, ChatLimiter.NONE);
    }

    @Override
    public String toString() {
        return "ChatCall[" + EndpointText.display(uri) + ", " + body.length + " bytes]";
    }
}
