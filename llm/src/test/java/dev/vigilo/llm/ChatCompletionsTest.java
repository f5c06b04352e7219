package dev.vigilo.llm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The HTTP client against real local endpoints: every way an exchange ends, and the limiter hook. */
class ChatCompletionsTest {
    private static final String ANSWER =
            "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"42\"},"
                    + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}";

    private final ChatCompletions client =
            ChatCompletions.http(new HttpOptions(Duration.ofSeconds(5), 1024, HttpOptions.Oversized.ABORT, "llm-test"));

    @AfterEach
    void close() {
        client.close();
    }

    private static ChatCall call(URI uri) {
        return ChatCall.of(uri, "{\"model\":\"m\"}".getBytes(StandardCharsets.UTF_8), Optional.empty(), seconds(5));
    }

    private static Duration seconds(long s) {
        return Duration.ofSeconds(s);
    }

    private static ChatExchange send(ChatCompletions c, ChatCall call) throws Exception {
        return c.send(call).get(30, TimeUnit.SECONDS);
    }

    @Test
    void sendsTheBodyAndHeadersAsGivenAndParsesTheAnswer() throws Exception {
        try (TestEndpoint ep = new TestEndpoint(x -> TestEndpoint.reply(x, 200, ANSWER))) {
            byte[] body = "{\"model\":\"m\",\"messages\":[]}".getBytes(StandardCharsets.UTF_8);
            Map<String, String> headers = new LinkedHashMap<>();
            headers.put("X-Org", "o1");
            headers.put("X-Trace", "t1");
            ChatExchange x = send(
                    client,
                    new ChatCall(ep.uri(), body, headers, Optional.of("sk-1"), seconds(5), 0, ChatLimiter.NONE));

            assertThat(x.outcome()).isEqualTo(ChatExchange.Outcome.ANSWERED);
            assertThat(x.status()).isEqualTo(200);
            assertThat(ChatAnswer.parse(x.json().orElseThrow())
                            .first()
                            .orElseThrow()
                            .text())
                    .contains("42");
            TestEndpoint.Received r = ep.received().get(0);
            assertThat(r.method()).isEqualTo("POST");
            assertThat(r.body()).isEqualTo(body);
            assertThat(r.headers().getFirst("Content-Type")).isEqualTo("application/json");
            assertThat(r.headers().getFirst("Accept")).isEqualTo("application/json");
            assertThat(r.headers().getFirst("X-Org")).isEqualTo("o1");
            assertThat(r.headers().getFirst("X-Trace")).isEqualTo("t1");
            assertThat(r.headers().getFirst("Authorization")).isEqualTo("Bearer sk-1");
        }
    }

    @Test
    void aRateLimitCarriesItsRetryAfterInSeconds() throws Exception {
        try (TestEndpoint ep = new TestEndpoint(
                x -> TestEndpoint.reply(x, 429, "{\"error\":{\"message\":\"slow down\"}}", "Retry-After", "3"))) {
            ChatExchange x = send(client, call(ep.uri()));
            assertThat(x.outcome()).isEqualTo(ChatExchange.Outcome.RATE_LIMITED);
            assertThat(x.retryAfter(Instant.now())).contains(seconds(3));
            assertThat(EndpointText.errorMessage(x.json().orElseThrow())).contains("slow down");
        }
    }

    @Test
    void aRateLimitCarriesItsRetryAfterAsAnHttpDate() throws Exception {
        Instant now = Instant.parse("2026-01-02T03:04:05Z");
        String date =
                DateTimeFormatter.RFC_1123_DATE_TIME.format(now.plusSeconds(7).atOffset(ZoneOffset.UTC));
        try (TestEndpoint ep = new TestEndpoint(x -> TestEndpoint.reply(x, 429, "", "Retry-After", date))) {
            ChatExchange x = send(client, call(ep.uri()));
            assertThat(x.outcome()).isEqualTo(ChatExchange.Outcome.RATE_LIMITED);
            assertThat(x.retryAfter()).contains(date);
            assertThat(x.retryAfter(now)).contains(seconds(7));
            assertThat(x.retryAfter(now.plusSeconds(60))).contains(Duration.ZERO);
        }
    }

    @Test
    void serverErrorsAndTimeoutsAreRetryableOtherStatusesAreRejections() throws Exception {
        for (int status : new int[] {500, 503, 408, 400, 401, 404}) {
            try (TestEndpoint ep = new TestEndpoint(x -> TestEndpoint.reply(x, status, "{\"error\":\"no\"}"))) {
                ChatExchange x = send(client, call(ep.uri()));
                assertThat(x.status()).isEqualTo(status);
                assertThat(x.outcome())
                        .as("HTTP %d", status)
                        .isEqualTo(
                                status >= 500 || status == 408
                                        ? ChatExchange.Outcome.RETRYABLE_STATUS
                                        : ChatExchange.Outcome.REJECTED);
                assertThat(EndpointText.errorMessage(x.json().orElseThrow())).contains("no");
            }
        }
    }

    @Test
    void aBodyThatIsNotExactlyOneJsonValueIsNotJson() throws Exception {
        for (String body : List.of("<html>busy</html>", "{\"a\":1,\"a\":2}", "{} {}", "{\"choices\":[")) {
            try (TestEndpoint ep = new TestEndpoint(x -> TestEndpoint.reply(x, 200, body))) {
                ChatExchange x = send(client, call(ep.uri()));
                assertThat(x.outcome()).as(body).isEqualTo(ChatExchange.Outcome.NOT_JSON);
                assertThat(x.json()).isEmpty();
                assertThat(new String(x.body(), StandardCharsets.UTF_8)).isEqualTo(body);
            }
        }
    }

    @Test
    void aSlowEndpointTimesOutWithinTheCallsTimeout() throws Exception {
        TestEndpoint[] self = new TestEndpoint[1];
        try (TestEndpoint ep = new TestEndpoint(x -> self[0].hold())) {
            self[0] = ep;
            RecordingLimiter limiter = new RecordingLimiter(Duration.ZERO);
            ChatCall c = new ChatCall(
                    ep.uri(), new byte[] {'{', '}'}, Map.of(), Optional.empty(), Duration.ofMillis(300), 0, limiter);
            ChatExchange x = send(client, c);
            assertThat(x.outcome()).isEqualTo(ChatExchange.Outcome.TIMEOUT);
            assertThat(ep.received()).hasSize(1);
            assertThat(limiter.settled).extracting(ChatExchange::outcome).containsExactly(ChatExchange.Outcome.TIMEOUT);
        }
    }

    @Test
    void aBodyOverTheLimitIsTooLargeAbortedOrDrained() throws Exception {
        String big = "x".repeat(10_000);
        try (TestEndpoint ep = new TestEndpoint(x -> TestEndpoint.reply(x, 200, big));
                ChatCompletions draining = ChatCompletions.http(
                        new HttpOptions(seconds(5), 1024, HttpOptions.Oversized.DRAIN, "llm-test-drain"))) {
            ChatExchange aborted = send(client, call(ep.uri()));
            assertThat(aborted.outcome()).isEqualTo(ChatExchange.Outcome.TOO_LARGE);
            assertThat(aborted.status()).isEqualTo(200);
            assertThat(aborted.bodySize()).isGreaterThan(1024);
            assertThat(aborted.body().length).isLessThanOrEqualTo(1024);

            ChatExchange drained = send(draining, call(ep.uri()));
            assertThat(drained.outcome()).isEqualTo(ChatExchange.Outcome.TOO_LARGE);
            assertThat(drained.bodySize()).isEqualTo(10_000);
            assertThat(drained.body().length).isLessThanOrEqualTo(1024);
        }
    }

    @Test
    void aBodyAtTheLimitIsRead() throws Exception {
        String body = "\"" + "x".repeat(1022) + "\"";
        try (TestEndpoint ep = new TestEndpoint(x -> TestEndpoint.reply(x, 200, body))) {
            ChatExchange x = send(client, call(ep.uri()));
            assertThat(x.outcome()).isEqualTo(ChatExchange.Outcome.ANSWERED);
            assertThat(x.bodySize()).isEqualTo(1024);
        }
    }

    @Test
    void aRefusedConnectionIsAConnectFailure() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        ChatExchange x = send(client, call(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions")));
        assertThat(x.outcome()).isEqualTo(ChatExchange.Outcome.CONNECT_FAILED);
        assertThat(x.status()).isZero();
        assertThat(x.cause()).isPresent();
    }

    @Test
    void aConnectionThatBreaksMidAnswerIsBroken() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<Void> server = CompletableFuture.runAsync(() -> {
                try (Socket c = s.accept()) {
                    InputStream in = c.getInputStream();
                    // Read the request head, then promise 100 bytes and send 10.
                    int matched = 0;
                    while (matched < 4) {
                        int b = in.read();
                        if (b < 0) {
                            return;
                        }
                        matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : (b == '\r' ? 1 : 0);
                    }
                    OutputStream out = c.getOutputStream();
                    out.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"choices\""
                            .getBytes(StandardCharsets.UTF_8));
                    out.flush();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            ChatExchange x = send(client, call(URI.create("http://127.0.0.1:" + s.getLocalPort() + "/")));
            server.get(30, TimeUnit.SECONDS);
            assertThat(x.outcome()).isEqualTo(ChatExchange.Outcome.CONNECTION_BROKEN);
        }
    }

    @Test
    void aHeaderTheHttpStackRefusesIsAnInvalidCallAndSendsNothing() throws Exception {
        try (TestEndpoint ep = new TestEndpoint(x -> TestEndpoint.reply(x, 200, ANSWER))) {
            RecordingLimiter limiter = new RecordingLimiter(Duration.ZERO);
            ChatCall c = new ChatCall(
                    ep.uri(),
                    new byte[] {'{', '}'},
                    Map.of("Host", "elsewhere"),
                    Optional.empty(),
                    seconds(5),
                    0,
                    limiter);
            ChatExchange x = send(client, c);
            assertThat(x.outcome()).isEqualTo(ChatExchange.Outcome.INVALID_CALL);
            assertThat(ep.received()).isEmpty();
            assertThat(limiter.settled).hasSize(1);
        }
    }

    @Test
    void theLimiterIsReservedBeforeAndSettledOnceBeforeTheResultCompletes() throws Exception {
        try (TestEndpoint ep = new TestEndpoint(x -> TestEndpoint.reply(x, 200, ANSWER))) {
            RecordingLimiter limiter = new RecordingLimiter(Duration.ofMillis(200));
            ChatCall c =
                    new ChatCall(ep.uri(), new byte[] {'{', '}'}, Map.of(), Optional.empty(), seconds(5), 17, limiter);
            long t0 = System.nanoTime();
            CompletableFuture<ChatExchange> f = client.send(c);
            // Registered after settle has run, or run at once when it already has: either way it sees it.
            CompletableFuture<Integer> seen = f.thenApply(x -> limiter.settled.size());
            ChatExchange x = f.get(30, TimeUnit.SECONDS);
            assertThat(System.nanoTime() - t0).as("the limiter's wait").isGreaterThanOrEqualTo(200_000_000L);
            assertThat(x.outcome()).isEqualTo(ChatExchange.Outcome.ANSWERED);
            assertThat(seen.get()).isEqualTo(1);
            assertThat(limiter.reserved).containsExactly(17L);
            assertThat(limiter.settled).containsExactly(x);
        }
    }

    @Test
    void cancellingAWaitingCallSendsNothingAndSettlesItCancelled() throws Exception {
        try (TestEndpoint ep = new TestEndpoint(x -> TestEndpoint.reply(x, 200, ANSWER))) {
            RecordingLimiter limiter = new RecordingLimiter(Duration.ofHours(1));
            CompletableFuture<ChatExchange> f = client.send(
                    new ChatCall(ep.uri(), new byte[] {'{', '}'}, Map.of(), Optional.empty(), seconds(5), 0, limiter));
            assertThat(f.cancel(true)).isTrue();
            assertThat(limiter.settled)
                    .extracting(ChatExchange::outcome)
                    .containsExactly(ChatExchange.Outcome.CANCELLED);
            assertThat(ep.received()).isEmpty();
        }
    }

    @Test
    void cancellingACallInFlightAbortsItAndSettlesItCancelled() throws Exception {
        TestEndpoint[] self = new TestEndpoint[1];
        try (TestEndpoint ep = new TestEndpoint(x -> self[0].hold())) {
            self[0] = ep;
            RecordingLimiter limiter = new RecordingLimiter(Duration.ZERO);
            CompletableFuture<ChatExchange> f = client.send(new ChatCall(
                    ep.uri(), new byte[] {'{', '}'}, Map.of(), Optional.empty(), Duration.ofMinutes(5), 0, limiter));
            ep.awaitRequest();
            assertThat(f.cancel(true)).isTrue();
            assertThat(limiter.settled)
                    .extracting(ChatExchange::outcome)
                    .containsExactly(ChatExchange.Outcome.CANCELLED);
        }
    }

    @Test
    void aHoldIsAskedAgainUntilItAdmitsAndAComposedLimiterAsksEachPartUntilItAdmits() throws Exception {
        try (TestEndpoint ep = new TestEndpoint(x -> TestEndpoint.reply(x, 200, ANSWER))) {
            HoldingLimiter first = new HoldingLimiter(2);
            HoldingLimiter second = new HoldingLimiter(3);
            RecordingLimiter third = new RecordingLimiter(Duration.ZERO);
            ChatLimiter all = ChatLimiter.all(List.of(first, ChatLimiter.NONE, second, third));
            ChatCall c = new ChatCall(ep.uri(), new byte[] {'{', '}'}, Map.of(), Optional.empty(), seconds(5), 5, all);
            ChatExchange x = send(client, c);
            assertThat(x.outcome()).isEqualTo(ChatExchange.Outcome.ANSWERED);
            // A part that admitted is not asked again: its admission may have taken capacity.
            assertThat(first.asked).hasValue(3);
            assertThat(second.asked).hasValue(4);
            assertThat(third.reserved).containsExactly(5L);
            assertThat(ep.received()).hasSize(1);
            assertThat(first.settled).hasValue(1);
            assertThat(second.settled).hasValue(1);
            assertThat(all.resend(c)).isFalse();
            second.resendNext = true;
            assertThat(all.resend(c)).as("any part may ask for a resend").isTrue();
        }
        assertThat(ChatLimiter.all(List.of())).isSameAs(ChatLimiter.NONE);
        HoldingLimiter one = new HoldingLimiter(0);
        assertThat(ChatLimiter.all(List.of(one, ChatLimiter.NONE))).isSameAs(one);
    }

    @Test
    void cancellingAHeldCallSendsNothingAndSettlesItCancelled() throws Exception {
        try (TestEndpoint ep = new TestEndpoint(x -> TestEndpoint.reply(x, 200, ANSWER))) {
            HoldingLimiter held = new HoldingLimiter(Integer.MAX_VALUE);
            CompletableFuture<ChatExchange> f = client.send(
                    new ChatCall(ep.uri(), new byte[] {'{', '}'}, Map.of(), Optional.empty(), seconds(5), 0, held));
            assertThat(f.cancel(true)).isTrue();
            assertThat(held.settled).hasValue(1);
            assertThat(ep.received()).isEmpty();
        }
    }

    /** Holds a call for 10 ms {@code holds} times, then admits it; counts what it was asked. */
    private static final class HoldingLimiter implements ChatLimiter {
        final int holds;
        final java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger settled = new java.util.concurrent.atomic.AtomicInteger();
        volatile boolean resendNext;

        HoldingLimiter(int holds) {
            this.holds = holds;
        }

        @Override
        public Duration admit(ChatCall call) {
            return asked.incrementAndGet() > holds ? Duration.ZERO : Duration.ofMillis(10);
        }

        @Override
        public Duration reserve(ChatCall call) {
            return Duration.ZERO;
        }

        @Override
        public void settle(ChatCall call, ChatExchange exchange) {
            settled.incrementAndGet();
        }

        @Override
        public boolean resend(ChatCall call) {
            return resendNext;
        }
    }

    /** Records what the client told it; waits {@code wait} before every call. */
    private static final class RecordingLimiter implements ChatLimiter {
        final Duration wait;
        final List<Long> reserved = new CopyOnWriteArrayList<>();
        final List<ChatExchange> settled = new CopyOnWriteArrayList<>();

        RecordingLimiter(Duration wait) {
            this.wait = wait;
        }

        @Override
        public Duration reserve(ChatCall call) {
            reserved.add(call.tokenEstimate());
            return wait;
        }

        @Override
        public void settle(ChatCall call, ChatExchange exchange) {
            settled.add(exchange);
        }
    }
}
