package dev.vigilo.datagen;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.common.retry.RetryPolicy;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;

/**
 * Sends chat completion requests for every chat step of a run: one HTTP/1.1 client (and connection pool), and one
 * {@link RateLimiter} pair (requests, tokens) per endpoint url, shared by all concurrent items. A 429 or 5xx answer,
 * or a connection that fails before the answer is complete, is sent again after a back-off (the endpoint's
 * Retry-After when given, which also pauses every other request to that endpoint; else exponential with full jitter)
 * without using up the step's attempts, up to {@link #MAX_RESENDS} times. A request that times out, any other 4xx,
 * and running out of re-sends fail the attempt ({@link StepFailure}). No message carries a key of the pipeline
 * ({@link SecretValues}, masked before a body is cut). Thread-safe.
 */
final class ChatClient implements AutoCloseable {
    /** Re-sends of one request after 429/5xx/connection failures before the attempt fails. */
    static final int MAX_RESENDS = 8;
    /** The longest Retry-After honoured (a longer one is capped). */
    static final Duration MAX_RETRY_AFTER = Duration.ofMinutes(2);
    /** The largest answer read. */
    static final int MAX_RESPONSE_BYTES = 8 << 20;

    private static final int MAX_DUMP = 2000;
    /** Requests per minute of an endpoint without a limit: far beyond any client. */
    private static final long UNLIMITED = 60_000_000_000L;

    /** One answered request: the parsed body and how many requests it took. */
    record Answer(JsonNode body, int requests) {}

    private final HttpClient http;
    private final RetryPolicy backoff;
    private final LongSupplier clock;
    private final Map<String, Endpoint> endpoints = new ConcurrentHashMap<>();

    private record Endpoint(RateLimiter requests, RateLimiter tokens) {}

    /** {@code backoff} bounds the sleeps between re-sends without a Retry-After (its attempts are not used). */
    ChatClient(RetryPolicy backoff, LongSupplier clock) {
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(30))
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
        this.backoff = backoff;
        this.clock = clock;
    }

    /** The default: re-sends after 0.5 s, doubling up to 30 s. */
    static ChatClient standard() {
        return new ChatClient(RetryPolicy.of(2, Duration.ofMillis(500), Duration.ofSeconds(30)), System::nanoTime);
    }

    /**
     * Sends {@code body} to {@code chat.url()} until it is answered with 2xx JSON.
     *
     * @param apiKey the bearer token, or null
     * @param secrets masked in every failure message (the pipeline's keys; {@code apiKey} is masked too)
     * @param tokenEstimate tokens the request is expected to use (for a tokens-per-minute limit)
     * @param timeout bound of one request
     * @throws StepFailure the attempt failed; its {@code requests} say how many requests it sent
     */
    Answer send(ChatSpec chat, byte[] body, String apiKey, SecretValues secrets, long tokenEstimate, Duration timeout)
            throws StepFailure, InterruptedException {
        SecretValues masked = secrets.and(apiKey);
        Endpoint ep = endpoints.computeIfAbsent(chat.url().toString(), u -> endpoint(chat.rateLimit()));
        String url = display(chat.url());
        int requests = 0;
        String lastProblem = null;
        for (int resend = 0; ; resend++) {
            if (resend > MAX_RESENDS) {
                throw failure(
                        "HttpStatusError",
                        "POST " + url + " still failed after " + MAX_RESENDS + " re-sends: " + lastProblem,
                        masked,
                        requests);
            }
            ep.requests().acquire(1);
            if (ep.tokens() != null) ep.tokens().acquire(tokenEstimate);
            HttpRequest.Builder b = HttpRequest.newBuilder(chat.url())
                    .timeout(timeout)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body));
            chat.headers().forEach(b::header);
            if (apiKey != null) b.header("Authorization", "Bearer " + apiKey);
            HttpResponse<byte[]> resp;
            requests++;
            try {
                resp = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            } catch (HttpTimeoutException e) {
                refund(ep, tokenEstimate);
                throw failure(
                        "StepTimeout",
                        "POST " + url + " did not answer within " + timeout.toSeconds()
                                + " s; raise timeout_seconds or check the endpoint's load",
                        masked,
                        requests);
            } catch (IOException e) {
                refund(ep, tokenEstimate);
                lastProblem = "the connection failed before the answer was complete (" + e + ")";
                sleep(backoffNanos(resend));
                continue;
            } catch (IllegalArgumentException e) {
                throw failure("HttpError", "POST " + url + " failed: " + e.getMessage(), masked, requests);
            }
            int status = resp.statusCode();
            byte[] bytes = resp.body();
            if (status == 429 || status >= 500 || status == 408) {
                refund(ep, tokenEstimate);
                lastProblem = "HTTP " + status + tail(bytes, masked);
                Optional<Duration> after = retryAfter(resp.headers().firstValue("Retry-After"));
                long wait = after.isPresent() ? after.get().toNanos() : backoffNanos(resend);
                if (after.isPresent()) ep.requests().pauseUntil(clock.getAsLong() + wait);
                sleep(wait);
                continue;
            }
            if (status / 100 != 2) {
                refund(ep, tokenEstimate);
                throw failure(
                        "HttpStatusError",
                        "POST " + url + " answered HTTP " + status + tail(bytes, masked) + "; " + advice(status, chat),
                        masked,
                        requests);
            }
            if (bytes.length > MAX_RESPONSE_BYTES) {
                throw failure(
                        "InvalidHttpResponse",
                        "POST " + url + " answered " + bytes.length + " bytes; set max_tokens",
                        masked,
                        requests);
            }
            JsonNode parsed;
            try {
                parsed = Json.MAPPER.readTree(bytes);
            } catch (JsonProcessingException e) {
                parsed = null;
            } catch (IOException e) {
                parsed = null;
            }
            if (parsed == null || !parsed.isObject()) {
                throw failure(
                        "InvalidHttpResponse",
                        "POST " + url + " answered HTTP " + status + " with a body that is not a JSON object:"
                                + tail(bytes, masked)
                                + "; check that url is an OpenAI-compatible chat completions endpoint",
                        masked,
                        requests);
            }
            if (ep.tokens() != null) {
                JsonNode usage = parsed.path("usage");
                if (usage.isObject()) {
                    long used = usage.path("prompt_tokens").asLong(0)
                            + usage.path("completion_tokens").asLong(0);
                    ep.tokens().adjust(used - tokenEstimate);
                }
            }
            return new Answer(parsed, requests);
        }
    }

    private Endpoint endpoint(ChatSpec.RateLimit limit) {
        // Without a request limit the limiter is effectively unbounded: it still carries a Retry-After pause.
        long rpm = limit == null || limit.requestsPerMinute() == 0 ? UNLIMITED : limit.requestsPerMinute();
        return new Endpoint(
                new RateLimiter(rpm, clock),
                limit != null && limit.tokensPerMinute() > 0 ? new RateLimiter(limit.tokensPerMinute(), clock) : null);
    }

    private static void refund(Endpoint ep, long tokens) {
        if (ep.tokens() != null) ep.tokens().adjust(-tokens);
    }

    private long backoffNanos(int resend) {
        long bound = backoff.backoffBound(resend + 2).toNanos();
        return bound == 0 ? 0 : ThreadLocalRandom.current().nextLong(bound / 2, bound + 1);
    }

    private static void sleep(long nanos) throws InterruptedException {
        if (nanos > 0) Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
    }

    /** Retry-After in seconds or as an HTTP date, capped at {@link #MAX_RETRY_AFTER}; empty when absent or bad. */
    static Optional<Duration> retryAfter(Optional<String> header) {
        if (header.isEmpty()) return Optional.empty();
        String v = header.get().strip();
        Duration d;
        try {
            d = Duration.ofMillis(Math.round(Double.parseDouble(v) * 1000));
        } catch (NumberFormatException e) {
            try {
                d = Duration.between(ZonedDateTime.now(), ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME));
            } catch (DateTimeParseException x) {
                return Optional.empty();
            }
        }
        if (d.isNegative()) d = Duration.ZERO;
        return Optional.of(d.compareTo(MAX_RETRY_AFTER) > 0 ? MAX_RETRY_AFTER : d);
    }

    private static String advice(int status, ChatSpec chat) {
        return switch (status) {
            case 401, 403 ->
                chat.apiKeyEnv() == null
                        ? "set api_key_env to the variable holding the API key"
                        : "check the API key in $" + chat.apiKeyEnv();
            case 404 -> "check the step's url and model";
            default -> "the endpoint rejected the request";
        };
    }

    /** ": <the body>": at most {@link #MAX_DUMP} characters, masked before the cut (which can leave part of a key). */
    private static String tail(byte[] b, SecretValues secrets) {
        if (b == null || b.length == 0) return "";
        String s = secrets.mask(new String(b, StandardCharsets.UTF_8)).strip();
        return ": " + (s.length() <= MAX_DUMP ? s : s.substring(0, MAX_DUMP) + "...");
    }

    /** A failure whose messages cannot carry a key (an endpoint may echo the request's headers). */
    private static StepFailure failure(String type, String message, SecretValues secrets, int requests) {
        return new StepFailure(type, secrets.mask(message), null).withRequests(requests);
    }

    /** scheme://host[:port]/path: no user info or query, which may hold credentials. */
    static String display(URI uri) {
        return uri.getScheme() + "://" + uri.getHost() + (uri.getPort() >= 0 ? ":" + uri.getPort() : "")
                + (uri.getRawPath() == null ? "" : uri.getRawPath());
    }

    @Override
    public void close() {
        // HttpClient has no close() before Java 21; its threads are daemons and its pool goes with it.
    }
}
