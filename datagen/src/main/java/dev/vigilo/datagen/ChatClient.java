package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.common.retry.RetryPolicy;
import dev.vigilo.fleet.BudgetReachedException;
import dev.vigilo.fleet.CostBudget;
import dev.vigilo.llm.ChatCall;
import dev.vigilo.llm.ChatCompletions;
import dev.vigilo.llm.ChatExchange;
import dev.vigilo.llm.ChatLimiter;
import dev.vigilo.llm.EndpointText;
import dev.vigilo.llm.HttpOptions;
import dev.vigilo.llm.Usage;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.ConnectException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

/**
 * Sends chat completion requests for every chat step of a run through the shared {@link ChatCompletions} client
 * (one connection pool), with one {@link EndpointLimiter} (requests and tokens per minute) per endpoint url, shared
 * by all concurrent items. A 429 or 5xx answer, or a connection that fails before the answer is complete, is sent
 * again after a back-off (the endpoint's Retry-After when given, which also pauses every other request to that
 * endpoint; else exponential with full jitter) without using up the step's attempts, up to {@link #MAX_RESENDS}
 * times. A request that times out, any other 4xx, and running out of re-sends fail the attempt ({@link
 * StepFailure}). No message carries a key of the pipeline ({@link SecretValues}, masked before a body is cut).
 * Thread-safe.
 */
final class ChatClient implements AutoCloseable {
    /** Re-sends of one request after 429/5xx/connection failures before the attempt fails. */
    static final int MAX_RESENDS = 8;
    /** The longest Retry-After honoured (a longer one is capped). */
    static final Duration MAX_RETRY_AFTER = Duration.ofMinutes(2);
    /** The largest answer read. */
    static final int MAX_RESPONSE_BYTES = 8 << 20;

    private static final int MAX_DUMP = 2000;

    /** One answered request: the parsed body and how many requests it took. */
    record Answer(JsonNode body, int requests) {}

    private final ChatCompletions http;
    private final RetryPolicy backoff;
    private final LongSupplier clock;
    private final Map<String, EndpointLimiter> endpoints = new ConcurrentHashMap<>();
    private final Function<ChatSpec, Optional<ChatLimiter>> fleet;
    private final CostBudget budget;

    /** {@code backoff} bounds the sleeps between re-sends without a Retry-After (its attempts are not used). */
    ChatClient(RetryPolicy backoff, LongSupplier clock) {
        this(backoff, clock, chat -> Optional.empty(), null);
    }

    /**
     * As {@link #ChatClient(RetryPolicy, LongSupplier)}, with the fleet's limiter of a step's endpoint where {@code
     * fleet} gives one (instead of the per-process limiter) and the experiment's {@code budget} (null: none).
     */
    ChatClient(
            RetryPolicy backoff,
            LongSupplier clock,
            Function<ChatSpec, Optional<ChatLimiter>> fleet,
            CostBudget budget) {
        // Oversized answers are read to the end (not kept) so their failure can say how large they were.
        this.http = ChatCompletions.http(new HttpOptions(
                Duration.ofSeconds(30), MAX_RESPONSE_BYTES, HttpOptions.Oversized.DRAIN, "datagen-chat"));
        this.backoff = backoff;
        this.clock = clock;
        this.fleet = fleet;
        this.budget = budget;
    }

    /** The default: re-sends after 0.5 s, doubling up to 30 s. */
    static ChatClient standard() {
        return standard(chat -> Optional.empty(), null);
    }

    /** The default back-off, with the fleet's limiters and a budget (see the constructor). */
    static ChatClient standard(Function<ChatSpec, Optional<ChatLimiter>> fleet, CostBudget budget) {
        return new ChatClient(
                RetryPolicy.of(2, Duration.ofMillis(500), Duration.ofSeconds(30)), System::nanoTime, fleet, budget);
    }

    /**
     * Sends {@code body} to {@code chat.url()} until it is answered with 2xx JSON.
     *
     * @param apiKey the bearer token, or null
     * @param secrets masked in every failure message (the pipeline's keys; {@code apiKey} is masked too)
     * @param tokenEstimate tokens the request is expected to use (for a tokens-per-minute limit)
     * @param timeout bound of one request
     * @throws StepFailure the attempt failed; its {@code requests} say how many requests it sent
     * @throws BudgetReachedException the experiment's budget refused a request (nothing more was sent)
     */
    Answer send(ChatSpec chat, byte[] body, String apiKey, SecretValues secrets, long tokenEstimate, Duration timeout)
            throws StepFailure, InterruptedException {
        SecretValues masked = secrets.and(apiKey);
        ChatLimiter limiter = fleet.apply(chat)
                .orElseGet(() -> endpoints.computeIfAbsent(
                        chat.url().toString(), u -> new EndpointLimiter(chat.rateLimit(), clock, MAX_RETRY_AFTER)));
        ChatCall call = new ChatCall(
                chat.url(), body, chat.headers(), Optional.ofNullable(apiKey), timeout, tokenEstimate, limiter);
        String url = display(chat.url());
        int requests = 0;
        String lastProblem = null;
        // The type of the last problem, so running out of re-sends is labelled by its cause: a connection that kept
        // failing is an HttpError (as a request that cannot be sent at all), not an HttpStatusError.
        String lastType = "HttpStatusError";
        for (int resend = 0; ; resend++) {
            if (resend > MAX_RESENDS) {
                throw failure(
                        lastType,
                        "POST " + url + " still failed after " + MAX_RESENDS + " re-sends: " + lastProblem,
                        masked,
                        requests);
            }
            requests++;
            ChatExchange x = exchange(chat, call);
            if (limiter.resend(call)) {
                // The fleet's circuit is open (this failure opened or met it): the call waits in the limiter's admit
                // and goes again, which is neither an attempt nor one of the re-sends.
                resend--;
                continue;
            }
            int status = x.status();
            switch (x.outcome()) {
                case TIMEOUT, CONNECT_TIMEOUT ->
                    throw failure(
                            "StepTimeout",
                            "POST " + url + " did not answer within " + timeout.toSeconds()
                                    + " s; raise timeout_seconds or check the endpoint's load",
                            masked,
                            requests);
                case CONNECT_FAILED, CONNECTION_BROKEN, CANCELLED -> {
                    lastProblem = "the connection failed before the answer was complete ("
                            + asSent(x.cause().orElse(null)) + ")";
                    lastType = "HttpError";
                    sleep(backoffNanos(resend));
                    continue;
                }
                case INVALID_CALL ->
                    throw failure(
                            "HttpError",
                            "POST " + url + " failed: "
                                    + x.cause().map(Throwable::getMessage).orElse("invalid request"),
                            masked,
                            requests);
                default -> {}
            }
            if (EndpointLimiter.resendable(status)) {
                lastProblem = "HTTP " + status + tail(x.body(), masked);
                lastType = "HttpStatusError";
                Optional<Duration> after = retryAfter(x);
                sleep(after.isPresent() ? after.get().toNanos() : backoffNanos(resend));
                continue;
            }
            if (status / 100 != 2) {
                throw failure(
                        "HttpStatusError",
                        "POST " + url + " answered HTTP " + status + tail(x.body(), masked) + "; "
                                + advice(status, chat),
                        masked,
                        requests);
            }
            if (x.outcome() == ChatExchange.Outcome.TOO_LARGE) {
                throw failure(
                        "InvalidHttpResponse",
                        "POST " + url + " answered " + x.bodySize() + " bytes; set max_tokens",
                        masked,
                        requests);
            }
            Optional<JsonNode> parsed = x.json();
            if (parsed.isEmpty() || !parsed.get().isObject()) {
                throw failure(
                        "InvalidHttpResponse",
                        "POST " + url + " answered HTTP " + status + " with a body that is not a JSON object:"
                                + tail(x.body(), masked)
                                + "; check that url is an OpenAI-compatible chat completions endpoint",
                        masked,
                        requests);
            }
            return new Answer(parsed.get(), requests);
        }
    }

    /**
     * One exchange, within the budget when there is one: the call's reservation is charged before it is sent
     * ({@link BudgetReachedException} when the budget is reached: nothing is sent) and replaced by its cost when it
     * ended.
     */
    private ChatExchange exchange(ChatSpec chat, ChatCall call) throws InterruptedException {
        if (budget == null) {
            return await(http.send(call));
        }
        CostBudget.Charge charge = budget.reserve(reservation(chat, call.body().length));
        ChatExchange x;
        try {
            x = await(http.send(call));
        } catch (InterruptedException | RuntimeException e) {
            // It may have been answered: charged whole.
            budget.settle(charge, charge.reserved());
            throw e;
        }
        budget.settle(charge, cost(chat, x, charge.reserved()));
        return x;
    }

    /**
     * What a call may cost at most: its body's bytes (a bound on its prompt tokens: a token of a byte-level
     * tokenizer covers at least one byte, and the JSON around the messages more than covers a chat template's extra
     * tokens) plus {@code max_tokens} for each choice, at the model's higher price per token.
     */
    static BigDecimal reservation(ChatSpec chat, int bodyBytes) {
        long answer = chat.parameters().path("max_tokens").asLong(ChatStep.DEFAULT_ANSWER_TOKENS) * chat.choices();
        long tokens = bodyBytes + answer;
        BigDecimal perMillion = chat.price().promptPerMillion().max(chat.price().completionPerMillion());
        return perMillion.multiply(BigDecimal.valueOf(tokens)).movePointLeft(6).stripTrailingZeros();
    }

    /**
     * What an exchange cost: an answer's usage at the model's prices; nothing for a call that surely was not
     * answered (no connection, or a status without usage that is not 2xx); the whole reservation for one that may
     * have been answered without our learning its usage (a timeout, a broken connection, a cancelled exchange, a
     * 2xx without usage).
     */
    static BigDecimal cost(ChatSpec chat, ChatExchange x, BigDecimal reserved) {
        Optional<Usage> usage = x.json().filter(JsonNode::isObject).flatMap(j -> Usage.of(j.get("usage")));
        if (usage.isPresent()) {
            return chat.price().cost(usage.get().promptTokens(), usage.get().completionTokens());
        }
        return switch (x.outcome()) {
            case CONNECT_FAILED, CONNECT_TIMEOUT, INVALID_CALL -> BigDecimal.ZERO;
            case RATE_LIMITED, RETRYABLE_STATUS, REJECTED -> x.status() / 100 == 2 ? reserved : BigDecimal.ZERO;
            default -> reserved;
        };
    }

    private static ChatExchange await(CompletableFuture<ChatExchange> f) throws InterruptedException {
        try {
            return f.get();
        } catch (InterruptedException e) {
            f.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            // The client completes every ending normally: anything else is a bug.
            throw new IllegalStateException("the chat client failed", e.getCause());
        }
    }

    /** Retry-After of a resendable answer, capped at {@link #MAX_RETRY_AFTER}; empty when absent or bad. */
    static Optional<Duration> retryAfter(ChatExchange x) {
        return x.retryAfter(Instant.now()).map(d -> d.compareTo(MAX_RETRY_AFTER) > 0 ? MAX_RETRY_AFTER : d);
    }

    /**
     * How a failed connection is named in a message: as the exception the JDK's blocking {@code HttpClient.send}
     * (which this class used before the shared client) throws for it, so messages stay as they were.
     */
    private static String asSent(Throwable t) {
        String msg = t == null ? null : t.getMessage();
        if (t instanceof ConnectException) {
            return new ConnectException(msg).toString();
        }
        if (t instanceof SSLHandshakeException) {
            return new SSLHandshakeException(msg).toString();
        }
        if (t instanceof SSLException) {
            return new SSLException(msg).toString();
        }
        return new IOException(msg).toString();
    }

    private long backoffNanos(int resend) {
        long bound = backoff.backoffBound(resend + 2).toNanos();
        return bound == 0 ? 0 : ThreadLocalRandom.current().nextLong(bound / 2, bound + 1);
    }

    private static void sleep(long nanos) throws InterruptedException {
        if (nanos > 0) {
            Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
        }
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
        if (b == null || b.length == 0) {
            return "";
        }
        String s = EndpointText.masked(b, secrets).strip();
        return ": " + (s.length() <= MAX_DUMP ? s : s.substring(0, MAX_DUMP) + "...");
    }

    /** A failure whose messages cannot carry a key (an endpoint may echo the request's headers). */
    private static StepFailure failure(String type, String message, SecretValues secrets, int requests) {
        return new StepFailure(type, secrets.mask(message), null).withRequests(requests);
    }

    /** scheme://host[:port]/path: no user info or query, which may hold credentials. */
    static String display(URI uri) {
        return EndpointText.display(uri);
    }

    @Override
    public void close() {
        http.close();
    }
}
