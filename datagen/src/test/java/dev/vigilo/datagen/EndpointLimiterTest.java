package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.llm.ChatCall;
import dev.vigilo.llm.ChatExchange;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The per-endpoint limit as the chat client's limiter, on a clock the test holds still. */
class EndpointLimiterTest {
    private final AtomicLong now = new AtomicLong();
    // 600 tokens a minute: 10 a second, a bucket of 10.
    private final EndpointLimiter limiter =
            new EndpointLimiter(new ChatSpec.RateLimit(0, 600), now::get, ChatClient.MAX_RETRY_AFTER);
    private final ChatCall call = new ChatCall(
            URI.create("http://127.0.0.1:1/v1/chat/completions"),
            new byte[0],
            Map.of(),
            Optional.empty(),
            Duration.ofSeconds(5),
            10,
            limiter);

    private static ChatExchange exchange(ChatExchange.Outcome outcome, int status, String retryAfter, String json)
            throws Exception {
        Optional<JsonNode> body = json == null ? Optional.empty() : Optional.of(Json.MAPPER.readTree(json));
        return new ChatExchange(
                outcome, status, Optional.ofNullable(retryAfter), new byte[0], 0, body, Optional.empty());
    }

    @Test
    void aFullBucketWaitsForTheRefill() {
        assertThat(limiter.reserve(call)).isZero();
        assertThat(limiter.reserve(call)).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void aFailedExchangeGivesItsTokensBack() throws Exception {
        for (ChatExchange.Outcome o : new ChatExchange.Outcome[] {
            ChatExchange.Outcome.TIMEOUT, ChatExchange.Outcome.CONNECT_FAILED, ChatExchange.Outcome.CONNECTION_BROKEN
        }) {
            assertThat(limiter.reserve(call)).isZero();
            limiter.settle(call, exchange(o, 0, null, null));
        }
        assertThat(limiter.reserve(call)).as("every failure refunded").isZero();
        limiter.settle(call, exchange(ChatExchange.Outcome.REJECTED, 400, null, "{}"));
        assertThat(limiter.reserve(call)).isZero();
    }

    @Test
    void anAnswerCorrectsTheEstimateByItsUsage() throws Exception {
        assertThat(limiter.reserve(call)).isZero();
        limiter.settle(
                call,
                exchange(
                        ChatExchange.Outcome.ANSWERED,
                        200,
                        null,
                        "{\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":3}}"));
        // 5 of the 10 came back: the next 10 wait for 5 more, half a second.
        assertThat(limiter.reserve(call).toNanos()).isBetween(499_000_000L, 501_000_000L);
    }

    @Test
    void anOversizedAnswerKeepsItsTokens() throws Exception {
        assertThat(limiter.reserve(call)).isZero();
        limiter.settle(call, exchange(ChatExchange.Outcome.TOO_LARGE, 200, null, null));
        assertThat(limiter.reserve(call)).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void aRetryAfterPausesEveryRequestToTheEndpointCapped() throws Exception {
        limiter.settle(call, exchange(ChatExchange.Outcome.RATE_LIMITED, 429, "3", null));
        // The refund filled the bucket again; the pause alone is the wait.
        assertThat(limiter.reserve(call)).isEqualTo(Duration.ofSeconds(3));
        limiter.settle(call, exchange(ChatExchange.Outcome.RETRYABLE_STATUS, 503, "3600", null));
        assertThat(limiter.reserve(call)).isEqualTo(ChatClient.MAX_RETRY_AFTER);
    }
}
