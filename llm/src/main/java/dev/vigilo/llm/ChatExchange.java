package dev.vigilo.llm;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * How one {@link ChatCall} ended, as the HTTP client saw it: classified, never retried, never turned into a message
 * (callers word their own). A value that holds the endpoint's words: mask {@link #body()} and {@link #json()} with
 * the caller's secrets before anything records them (an endpoint may echo the request's headers).
 *
 * @param outcome    the classification
 * @param status     the HTTP status, or 0 when no response head arrived
 * @param retryAfter the raw {@code Retry-After} header of the response, if any
 * @param body       the response body, complete for every outcome with a status except {@code TOO_LARGE} (then
 *                   at most the limit's first bytes); empty without a response
 * @param bodySize   the body's size in bytes: with {@code TOO_LARGE}, the whole size if the client drained it, else
 *                   the bytes received before it stopped reading
 * @param json       the body parsed as exactly one JSON value (strictly: duplicate keys or trailing content are not
 *                   JSON), if it is one and complete
 * @param cause      what failed, for the outcomes without a complete answer
 */
public record ChatExchange(
        Outcome outcome,
        int status,
        Optional<String> retryAfter,
        byte[] body,
        long bodySize,
        Optional<JsonNode> json,
        Optional<Throwable> cause) {
    /** The classes of ending a caller decides on; each caller keeps its own retry rules over them. */
    public enum Outcome {
        /** 2xx with a JSON body. */
        ANSWERED,
        /** 2xx whose body is not exactly one JSON value. */
        NOT_JSON,
        /** 429 Too Many Requests (see {@link #retryAfter(Instant)}). */
        RATE_LIMITED,
        /** 408 or 5xx: the endpoint failed or timed the request out; sending again may succeed. */
        RETRYABLE_STATUS,
        /** Any other status outside 2xx: the endpoint refused the request as it is. */
        REJECTED,
        /** The body went past the client's limit ({@link HttpOptions#maxResponseBytes()}). */
        TOO_LARGE,
        /** No complete answer within the call's timeout (the exchange was cancelled). */
        TIMEOUT,
        /** No connection within the client's connect timeout. */
        CONNECT_TIMEOUT,
        /** The connection was refused or the host is unreachable: nothing was sent. */
        CONNECT_FAILED,
        /** The connection failed after it was made, before the answer was complete. */
        CONNECTION_BROKEN,
        /** The HTTP stack refused the call itself (e.g. a header it does not allow): nothing was sent. */
        INVALID_CALL,
        /** The caller cancelled the exchange (only {@link ChatLimiter#settle} sees this). */
        CANCELLED
    }

    public ChatExchange {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(retryAfter, "retryAfter");
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(json, "json");
        Objects.requireNonNull(cause, "cause");
    }

    /** An exchange that ended without a response. */
    static ChatExchange failed(Outcome outcome, Throwable cause) {
        return new ChatExchange(
                outcome, 0, Optional.empty(), new byte[0], 0, Optional.empty(), Optional.ofNullable(cause));
    }

    /** The response's {@code Retry-After} as a non-negative wait from {@code now}, when it has a valid one. */
    public Optional<Duration> retryAfter(Instant now) {
        return retryAfter.flatMap(v -> RetryAfter.parse(v, now));
    }

    @Override
    public String toString() {
        return "ChatExchange[" + outcome + (status == 0 ? "" : ", HTTP " + status) + ", " + bodySize + " bytes]";
    }
}
