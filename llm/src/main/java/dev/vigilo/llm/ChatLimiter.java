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

    /**
     * The limiters one after the other (e.g. a run's budget and a fleet's rate limit): {@link #reserve} reserves with
     * each in order and waits the longest of their waits; {@link #settle} settles each. When one refuses (throws), the
     * ones that already reserved are settled with a {@link ChatExchange.Outcome#CANCELLED} exchange (nothing was sent)
     * and the refusal is rethrown.
     */
    static ChatLimiter all(ChatLimiter... limiters) {
        java.util.List<ChatLimiter> list = java.util.List.of(limiters);
        return new ChatLimiter() {
            @Override
            public Duration reserve(ChatCall call) {
                Duration wait = Duration.ZERO;
                for (int i = 0; i < list.size(); i++) {
                    Duration w;
                    try {
                        w = list.get(i).reserve(call);
                    } catch (RuntimeException refused) {
                        ChatExchange none = ChatExchange.failed(ChatExchange.Outcome.CANCELLED, refused);
                        for (int j = 0; j < i; j++) {
                            list.get(j).settle(call, none);
                        }
                        throw refused;
                    }
                    if (w.compareTo(wait) > 0) {
                        wait = w;
                    }
                }
                return wait;
            }

            @Override
            public void settle(ChatCall call, ChatExchange exchange) {
                for (ChatLimiter l : list) {
                    l.settle(call, exchange);
                }
            }

            @Override
            public String toString() {
                return "ChatLimiter.all" + list;
            }
        };
    }

    /**
     * Takes the capacity {@code call} needs (a limiter may refuse a call by throwing; the client then sends nothing and
     * the exception reaches the sender); returns how long to wait before sending it (zero: at once). */
    Duration reserve(ChatCall call);

    /**
     * How the reserved call ended: the place to give back what it did not use (a failed exchange, fewer tokens than
     * estimated) or to pause (an endpoint's Retry-After).
     */
    void settle(ChatCall call, ChatExchange exchange);
}
