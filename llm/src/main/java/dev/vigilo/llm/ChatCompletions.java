package dev.vigilo.llm;

import java.util.concurrent.CompletableFuture;

/**
 * An OpenAI-compatible chat completions client: sends one {@link ChatCall} and tells how it ended. Thread-safe; one
 * client (and its connection pool) serves every concurrent call of a process.
 *
 * <p>Contract of {@link #send}: one exchange, never retried; nothing blocks the calling thread (the {@link
 * ChatLimiter}'s wait and the exchange itself run on the client's threads). The future completes normally with a
 * {@link ChatExchange} for every ending, failures included, within the call's timeout after the limiter's wait;
 * the call's limiter has been {@linkplain ChatLimiter#settle settled} before it completes. It completes
 * exceptionally only with a {@link java.util.concurrent.CancellationException} when the caller cancels it, which
 * also aborts the exchange, and with the limiter's refusal when {@link ChatLimiter#reserve} refuses the call by
 * throwing (nothing sent, nothing to settle).
 */
public interface ChatCompletions extends AutoCloseable {
    /** Sends {@code call} after its limiter's wait. */
    CompletableFuture<ChatExchange> send(ChatCall call);

    /** Stops the client's threads; exchanges in flight are abandoned. */
    @Override
    void close();

    /** A client over the JDK's HTTP/1.1 client (no redirects followed). */
    static ChatCompletions http(HttpOptions options) {
        return new HttpChatCompletions(options);
    }
}
