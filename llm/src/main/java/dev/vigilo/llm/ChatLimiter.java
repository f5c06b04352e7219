package dev.vigilo.llm;

import java.time.Duration;

/**
 * Decides when a {@link ChatCall} may be sent: the hook a per-process or fleet-wide rate limit plugs into. The client
 * calls {@link #reserve} once before each exchange and {@link #settle} exactly once after it, with how it ended
 * (also when it ended before anything was sent: cancelled while waiting, an invalid call). Both must be thread-safe
 * and must not block: a wait is returned, and the client schedules the exchange after it without holding a thread.
 */
public interface ChatLimiter {
    /** No limit: every call is sent at once. */
    ChatLimiter NONE = new ChatLimiter() {
        @Override
        public Duration reserve(ChatCall call) {
            return Duration.ZERO;
        }

        @Override
        public void settle(ChatCall call, ChatExchange exchange) {}

        @Override
        public String toString() {
            return "ChatLimiter.NONE";
        }
    };

    /** Takes the capacity {@code call} needs; returns how long to wait before sending it (zero: at once). */
    Duration reserve(ChatCall call);

    /**
     * How the reserved call ended: the place to give back what it did not use (a failed exchange, fewer tokens than
     * estimated) or to pause (an endpoint's Retry-After).
     */
    void settle(ChatCall call, ChatExchange exchange);
}
