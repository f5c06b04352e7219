package dev.vigilo.llm;

import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link ChatLimiter#all}: limiters applied in order. Remembers, per call being admitted, how many parts already
 * admitted it, because a part's admission may take capacity and must not be taken twice. Thread-safe.
 */
final class AllLimiters implements ChatLimiter {
    private final List<ChatLimiter> parts;
    /** Calls part-way through admission: how many leading parts admitted them. Identity: a call is one send. */
    private final Map<ChatCall, Integer> admitted = Collections.synchronizedMap(new IdentityHashMap<>());

    AllLimiters(List<ChatLimiter> parts) {
        this.parts = List.copyOf(parts);
    }

    @Override
    public Duration admit(ChatCall call) {
        int from = admitted.getOrDefault(call, 0);
        for (int i = from; i < parts.size(); i++) {
            Duration hold = parts.get(i).admit(call);
            if (!(hold.isNegative() || hold.isZero())) {
                admitted.put(call, i);
                return hold;
            }
        }
        admitted.remove(call);
        return Duration.ZERO;
    }

    /**
     * Reserves with each part in order and waits the longest of their waits. When a part refuses (throws), the parts
     * that already reserved are settled with a {@link ChatExchange.Outcome#CANCELLED} exchange (nothing was sent) and
     * the refusal is rethrown.
     */
    @Override
    public Duration reserve(ChatCall call) {
        Duration wait = Duration.ZERO;
        for (int i = 0; i < parts.size(); i++) {
            Duration w;
            try {
                w = parts.get(i).reserve(call);
            } catch (RuntimeException refused) {
                ChatExchange none = ChatExchange.failed(ChatExchange.Outcome.CANCELLED, refused);
                admitted.remove(call);
                for (int j = 0; j < i; j++) {
                    parts.get(j).settle(call, none);
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
        admitted.remove(call);
        for (ChatLimiter p : parts) {
            p.settle(call, exchange);
        }
    }

    @Override
    public boolean resend(ChatCall call) {
        boolean any = false;
        // Every part is asked (no short cut): each forgets the call's resend mark when asked.
        for (ChatLimiter p : parts) {
            any |= p.resend(call);
        }
        return any;
    }

    @Override
    public String toString() {
        return "ChatLimiter.all" + parts;
    }
}
