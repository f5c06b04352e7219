package dev.vigilo.llm;

import java.time.Duration;
import java.util.Objects;

/**
 * How an HTTP {@link ChatCompletions} client is built.
 *
 * @param connectTimeout   bound of opening a connection ({@link ChatExchange.Outcome#CONNECT_TIMEOUT} beyond it)
 * @param maxResponseBytes the largest response body kept in memory
 * @param oversized        what happens to a body larger than {@code maxResponseBytes}
 * @param threadName       the role in the names of the client's daemon threads ({@code vigilo-<role>-<n>}, see
 *                         {@code Threads}), e.g. {@code http-agent}
 */
public record HttpOptions(Duration connectTimeout, int maxResponseBytes, Oversized oversized, String threadName) {
    /** What the client does with a response body over the limit; either way the exchange ends {@code TOO_LARGE}. */
    public enum Oversized {
        /** Cancel the exchange at the first byte over the limit (nothing more is read). */
        ABORT,
        /** Keep reading to the end without keeping the rest, so {@link ChatExchange#bodySize()} is the whole size. */
        DRAIN
    }

    public HttpOptions {
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(oversized, "oversized");
        Objects.requireNonNull(threadName, "threadName");
        if (maxResponseBytes < 1) {
            throw new IllegalArgumentException("maxResponseBytes must be >= 1");
        }
    }
}
