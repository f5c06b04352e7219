package dev.vigilo.datagen;

import dev.vigilo.llm.ChatCall;
import dev.vigilo.llm.ChatExchange;
import dev.vigilo.llm.ChatLimiter;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The per-process rate limit of one endpoint url ({@code rate_limit}: requests and tokens per minute), as the shared
 * chat client's {@link ChatLimiter}: a request reserves one request and its token estimate; an exchange that failed
 * gives its tokens back, an answer corrects the estimate by its usage, and a resendable answer's Retry-After pauses
 * every request to the url. Without a request limit the request bucket is effectively unbounded: it still carries
 * the pause. Thread-safe.
 */
final class EndpointLimiter implements ChatLimiter {
    /** Requests per minute of an endpoint without a limit: far beyond any client. */
    private static final long UNLIMITED = 60_000_000_000L;

    private final RateLimiter requests;
    private final RateLimiter tokens;
    private final LongSupplier clock;
    private final Duration maxRetryAfter;

    EndpointLimiter(ChatSpec.RateLimit limit, LongSupplier clock, Duration maxRetryAfter) {
        long rpm = limit == null || limit.requestsPerMinute() == 0 ? UNLIMITED : limit.requestsPerMinute();
        this.requests = new RateLimiter(rpm, clock);
        this.tokens =
                limit != null && limit.tokensPerMinute() > 0 ? new RateLimiter(limit.tokensPerMinute(), clock) : null;
        this.clock = clock;
        this.maxRetryAfter = maxRetryAfter;
    }

    /** 429, 408 and 5xx are sent again. */
    static boolean resendable(int status) {
        return status == 429 || status >= 500 || status == 408;
    }

    @Override
    public Duration reserve(ChatCall call) {
        long wait = requests.reserve(1);
        if (tokens != null) {
            wait = Math.max(wait, tokens.reserve(call.tokenEstimate()));
        }
        return Duration.ofNanos(wait);
    }

    @Override
    public void settle(ChatCall call, ChatExchange x) {
        switch (x.outcome()) {
            case TIMEOUT, CONNECT_TIMEOUT, CONNECT_FAILED, CONNECTION_BROKEN -> refund(call);
            case RATE_LIMITED, RETRYABLE_STATUS, REJECTED, TOO_LARGE -> {
                if (x.status() / 100 == 2) {
                    // An oversized answer was answered: its tokens were used.
                    return;
                }
                refund(call);
                if (resendable(x.status())) {
                    Optional<Duration> after =
                            x.retryAfter(Instant.now()).map(d -> d.compareTo(maxRetryAfter) > 0 ? maxRetryAfter : d);
                    after.ifPresent(d -> requests.pauseUntil(clock.getAsLong() + d.toNanos()));
                }
            }
            case ANSWERED -> {
                if (tokens != null && x.json().orElseThrow().isObject()) {
                    var usage = x.json().get().path("usage");
                    if (usage.isObject()) {
                        long used = usage.path("prompt_tokens").asLong(0)
                                + usage.path("completion_tokens").asLong(0);
                        tokens.adjust(used - call.tokenEstimate());
                    }
                }
            }
            case NOT_JSON, INVALID_CALL, CANCELLED -> {}
        }
    }

    private void refund(ChatCall call) {
        if (tokens != null) {
            tokens.adjust(-call.tokenEstimate());
        }
    }
}
