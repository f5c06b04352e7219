package dev.vigilo.llm;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.concurrent.Threads;
import java.net.ConnectException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@link ChatCompletions} over the JDK HTTP/1.1 client: asynchronous end to end (a limiter's wait and each call's
 * timeout are timers, not sleeping threads), one connection pool for every call. The client's executor is a fixed
 * set of {@link #THREADS} threads, however many calls are in flight (docs/execution.md, "Calls in flight"): the
 * client's selector thread does the socket I/O, these threads only hand on what it read and complete the calls'
 * futures, so a thread per call (a cached pool grows one under load) buys nothing and costs a stack per call.
 */
final class HttpChatCompletions implements ChatCompletions {
    /** The client executor's threads: the machine's cores, at least 2. */
    static final int THREADS = Math.max(2, Runtime.getRuntime().availableProcessors());

    private final HttpOptions options;
    /** How long {@link #close} waits for the selector thread to end after its interrupt (it ends in microseconds). */
    private static final Duration SELECTOR_STOP_WAIT = Duration.ofSeconds(1);

    private final ExecutorService executor;
    private final ScheduledThreadPoolExecutor timers;
    private final HttpClient client;

    HttpChatCompletions(HttpOptions options) {
        this.options = options;
        this.executor = Executors.newFixedThreadPool(THREADS, Threads.daemonFactory(options.threadName()));
        this.timers = new ScheduledThreadPoolExecutor(1, Threads.daemonFactory(options.threadName() + "-timer"));
        // A finished call's timeout must not stay queued until it would have fired.
        this.timers.setRemoveOnCancelPolicy(true);
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(options.connectTimeout())
                .followRedirects(HttpClient.Redirect.NEVER)
                .executor(executor)
                .build();
    }

    @Override
    public CompletableFuture<ChatExchange> send(ChatCall call) {
        Exchange x = new Exchange(call);
        x.admit();
        return x.result;
    }

    /** One call's state: its result, the HTTP future and the timer in flight, and whether the limiter was told. */
    private final class Exchange {
        final ChatCall call;
        final CompletableFuture<ChatExchange> result = new CompletableFuture<>();
        final AtomicReference<CompletableFuture<HttpResponse<byte[]>>> inFlight = new AtomicReference<>();
        final AtomicReference<ScheduledFuture<?>> timer = new AtomicReference<>();
        final AtomicBoolean settled = new AtomicBoolean();
        final AtomicBoolean timedOut = new AtomicBoolean();

        Exchange(ChatCall call) {
            this.call = call;
            result.whenComplete((r, t) -> {
                if (t != null) {
                    // Cancelled by the caller: abort what is in flight and give the reservation back.
                    cancelTimer();
                    CompletableFuture<HttpResponse<byte[]>> f = inFlight.get();
                    if (f != null) {
                        f.cancel(true);
                    }
                    settle(ChatExchange.failed(ChatExchange.Outcome.CANCELLED, t));
                }
            });
        }

        /** Asks the limiter to admit the call, again after each hold; then reserves and starts after the wait. */
        void admit() {
            if (result.isDone()) {
                return;
            }
            Duration hold = call.limiter().admit(call);
            if (!(hold.isNegative() || hold.isZero())) {
                timer.set(timers.schedule(this::admit, hold.toNanos(), TimeUnit.NANOSECONDS));
                if (result.isDone()) {
                    // Cancelled while the hold was being scheduled.
                    cancelTimer();
                }
                return;
            }
            timer.set(null);
            Duration wait;
            try {
                wait = call.limiter().reserve(call);
            } catch (RuntimeException refused) {
                // The limiter refused the call (ChatLimiter#reserve): nothing is sent and nothing was reserved, so
                // there is nothing to settle; the sender gets the refusal as the future's failure.
                settled.set(true);
                result.completeExceptionally(refused);
                return;
            }
            if (wait.isNegative() || wait.isZero()) {
                start();
            } else {
                schedule(timers.schedule(this::start, wait.toNanos(), TimeUnit.NANOSECONDS));
            }
        }

        void schedule(ScheduledFuture<?> f) {
            // The exchange may have started (and set its timeout timer) before this runs.
            timer.compareAndSet(null, f);
        }

        void start() {
            if (result.isDone()) {
                return;
            }
            HttpRequest request;
            try {
                HttpRequest.Builder b = HttpRequest.newBuilder(call.uri())
                        .timeout(call.timeout())
                        .header("Content-Type", "application/json")
                        .header("Accept", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(call.body()));
                call.headers().forEach(b::header);
                call.apiKey().ifPresent(k -> b.header("Authorization", "Bearer " + k));
                request = b.build();
            } catch (IllegalArgumentException e) {
                finish(ChatExchange.failed(ChatExchange.Outcome.INVALID_CALL, e));
                return;
            }
            CompletableFuture<HttpResponse<byte[]>> f;
            try {
                f = client.sendAsync(
                        request, info -> new LimitedBody(info, options.maxResponseBytes(), options.oversized()));
            } catch (IllegalArgumentException e) {
                finish(ChatExchange.failed(ChatExchange.Outcome.INVALID_CALL, e));
                return;
            }
            inFlight.set(f);
            // The request's own timeout covers the response head only: this bounds the whole exchange.
            timer.set(timers.schedule(
                    () -> {
                        if (!f.isDone()) {
                            timedOut.set(true);
                            f.cancel(true);
                        }
                    },
                    call.timeout().toNanos(),
                    TimeUnit.NANOSECONDS));
            if (result.isDone()) {
                // Cancelled while the exchange was being started.
                f.cancel(true);
            }
            f.whenComplete((response, failure) -> {
                cancelTimer();
                finish(response != null ? answered(response) : failed(failure));
            });
        }

        private ChatExchange failed(Throwable failure) {
            Throwable t = unwrap(failure);
            if (timedOut.get()) {
                return ChatExchange.failed(ChatExchange.Outcome.TIMEOUT, t);
            }
            if (t instanceof LimitedBody.TooLarge large) {
                return new ChatExchange(
                        ChatExchange.Outcome.TOO_LARGE,
                        large.status,
                        large.retryAfter,
                        large.prefix,
                        large.size,
                        Optional.empty(),
                        Optional.of(large));
            }
            ChatExchange.Outcome outcome;
            if (t instanceof CancellationException) {
                outcome = ChatExchange.Outcome.CANCELLED;
            } else if (t instanceof HttpConnectTimeoutException) {
                outcome = ChatExchange.Outcome.CONNECT_TIMEOUT;
            } else if (t instanceof HttpTimeoutException) {
                outcome = ChatExchange.Outcome.TIMEOUT;
            } else if (t instanceof ConnectException) {
                outcome = ChatExchange.Outcome.CONNECT_FAILED;
            } else if (t instanceof IllegalArgumentException) {
                outcome = ChatExchange.Outcome.INVALID_CALL;
            } else {
                outcome = ChatExchange.Outcome.CONNECTION_BROKEN;
            }
            return ChatExchange.failed(outcome, t);
        }

        private void finish(ChatExchange exchange) {
            settle(exchange);
            result.complete(exchange);
        }

        private void settle(ChatExchange exchange) {
            if (settled.compareAndSet(false, true)) {
                call.limiter().settle(call, exchange);
            }
        }

        private void cancelTimer() {
            ScheduledFuture<?> t = timer.get();
            if (t != null) {
                t.cancel(false);
            }
        }
    }

    private static ChatExchange answered(HttpResponse<byte[]> response) {
        int status = response.statusCode();
        byte[] body = response.body();
        Optional<JsonNode> json = Json.parse(body);
        ChatExchange.Outcome outcome;
        if (status >= 200 && status <= 299) {
            outcome = json.isPresent() ? ChatExchange.Outcome.ANSWERED : ChatExchange.Outcome.NOT_JSON;
        } else if (status == 429) {
            outcome = ChatExchange.Outcome.RATE_LIMITED;
        } else if (status == 408 || status >= 500) {
            outcome = ChatExchange.Outcome.RETRYABLE_STATUS;
        } else {
            outcome = ChatExchange.Outcome.REJECTED;
        }
        return new ChatExchange(
                outcome,
                status,
                response.headers().firstValue("Retry-After"),
                body,
                body.length,
                json,
                Optional.empty());
    }

    private static Throwable unwrap(Throwable t) {
        Throwable c = t;
        while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        return c;
    }

    @Override
    public void close() {
        timers.shutdownNow();
        executor.shutdownNow();
        try {
            // Without this the JVM's exit waits 300 ms for the client's selector thread (SelectorThread).
            SelectorThread.stop(client, SELECTOR_STOP_WAIT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "ChatCompletions[http, " + options.threadName() + "]";
    }
}
