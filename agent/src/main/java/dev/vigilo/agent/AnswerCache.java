package dev.vigilo.agent;

import java.util.Optional;

/**
 * Earlier answers of OpenAI-compatible endpoints, by request ({@code agent.cache: true},
 * docs/formats/agent-protocol.md "Answer cache"): an http agent looks a request up before sending it and leaves
 * every answer it used. The key is the hex SHA-256 of the request's canonical form (the endpoint URL without
 * credentials and the request body, keys sorted), so identical requests of any run share it. Implementations must
 * be thread-safe; a failure to read or write is not the agent's: they report it as a miss and drop the write.
 */
public interface AnswerCache {
    /** No cache: every lookup misses, nothing is kept. */
    AnswerCache NONE = new AnswerCache() {
        @Override
        public Optional<byte[]> get(String key) {
            return Optional.empty();
        }

        @Override
        public void put(String key, byte[] answer) {}
    };

    /** The answer kept under {@code key} (a chat completions response body, JSON), if any. */
    Optional<byte[]> get(String key);

    /** Keeps {@code answer} under {@code key}; an answer already kept under it stays (the first one wins). */
    void put(String key, byte[] answer);
}
