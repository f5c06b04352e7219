package dev.vigilo.llm;

import java.time.Duration;
import java.util.List;

/**
 * Decides when a {@link ChatCall} may be sent: the hook a per-process or fleet-wide rate limit plugs into. The client
 * asks {@link #admit} before each exchange, again after each hold it answers, until it answers zero; then calls
 * {@link #reserve} once, and {@link #settle} exactly once after the exchange, with how it ended (also when it ended
 * before anything was sent: cancelled while held or waiting, an invalid call; a limiter must accept the settling of
 * a call it never admitted). All must be thread-safe and must not block: a hold or a wait is returned, and the client
 * schedules the next step after it without holding a thread. After settling, the caller may ask {@link #resend}
 * whether the call's failure belongs to the limiter (an open circuit) rather than to the caller's attempt.
 *
 * <p>Several limiters compose with {@link #all}: a call is sent once every one of them let it.
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
     * The limiters one after the other (e.g. a run's budget and a fleet's rate limit), as {@link #all(List)}.
     */
    static ChatLimiter all(ChatLimiter... limiters) {
        return all(java.util.List.of(limiters));
    }

    /**
     * Whether {@code call} may go on to {@link #reserve} now: zero when it may (having taken what the limiter hands
     * out only at this step, such as fleet permits), otherwise how long until it should be asked again (a limiter
     * waiting for permits, or for an open circuit to be probed). Asked again for the same call until it answers
     * zero or the call is cancelled. The default admits at once.
     */
    default Duration admit(ChatCall call) {
        return Duration.ZERO;
    }

    /**
     * After {@link #settle}: whether {@code call}'s failure was the limiter's business (it opened, or met, an open
     * circuit), so the caller should send the same call again, which waits in {@link #admit}, without counting it
     * against its attempts. Asked at most once per settled exchange; the default never asks for a resend.
     */
    default boolean resend(ChatCall call) {
        return false;
    }

    /**
     * Takes the capacity {@code call} needs (a limiter may refuse a call by throwing; the client then sends nothing and
     * the exception reaches the sender); returns how long to wait before sending it (zero: at once).
     */
    Duration reserve(ChatCall call);

    /**
     * How the reserved call ended: the place to give back what it did not use (a failed exchange, fewer tokens than
     * estimated) or to pause (an endpoint's Retry-After).
     */
    void settle(ChatCall call, ChatExchange exchange);

    /**
     * The limiters {@code parts} together, in their order: a call is admitted once each part admitted it (a part that
     * admitted is not asked again for that call), waits the longest of their reserves, settles with every part, and is
     * resent when any part asks for it. No parts: {@link #NONE}; one part: that part.
     */
    static ChatLimiter all(List<ChatLimiter> parts) {
        List<ChatLimiter> given = parts.stream().filter(p -> p != NONE).toList();
        if (given.isEmpty()) {
            return NONE;
        }
        return given.size() == 1 ? given.get(0) : new AllLimiters(given);
    }
}
