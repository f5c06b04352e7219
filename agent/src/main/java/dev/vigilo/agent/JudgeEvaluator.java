package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.common.retry.RetryPolicy;
import dev.vigilo.config.RubricTemplate;
import dev.vigilo.llm.ChatAnswer;
import dev.vigilo.llm.ChatCall;
import dev.vigilo.llm.ChatChoice;
import dev.vigilo.llm.ChatCompletions;
import dev.vigilo.llm.ChatExchange;
import dev.vigilo.llm.ChatLimiter;
import dev.vigilo.llm.ChatMessage;
import dev.vigilo.llm.ChatRequest;
import dev.vigilo.llm.EndpointText;
import dev.vigilo.llm.ResponseFormat;
import dev.vigilo.llm.Usage;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code judge}: a model grades the output by a rubric over an OpenAI-compatible chat completions endpoint
 * (docs/formats/agent-protocol.md, "Judges"). One request per attempt through the run's shared {@link
 * ChatCompletions} client, asking for structured output ({@code response_format} json_schema of {@code score} and
 * {@code reason}); the answer is read by {@link JudgeAnswers}. Attempts follow the http agent's rules under one
 * {@link RetryPolicy}: 429 waits its {@code Retry-After} (capped by the environment's), 408, 5xx, timeouts and
 * connection failures are retried, other 4xx are not; an answer without a usable score is retried too. What is
 * still unusable after the last attempt is an evaluator error, never a failed verdict: {@code unscored} (quoting the
 * judge's last answer), {@code timeout} or {@code judge_failed}. The tokens of every attempt that reported usage are
 * on the verdict. Every attempt's request and answer reach the context's observer masked. Thread-safe.
 */
final class JudgeEvaluator implements Evaluator {
    /** The largest answer body read. */
    static final int MAX_RESPONSE_BYTES = 8 << 20;
    /** How much of a judge's raw answer an {@code unscored} message quotes. */
    static final int QUOTED = 200;

    /**
     * A judge's settings (docs/formats/plan-profile.md, {@code kind: judge}).
     *
     * @param name        the judge's name in messages and observers (a panel's judge: {@code panel/judge})
     * @param uri         the chat completions endpoint
     * @param model       the model asked
     * @param apiKeyEnv   the variable the key was read from (for messages)
     * @param apiKey      the key, sent as a bearer token; never printed
     * @param rubric      the rubric
     * @param scale       the scale or grades
     * @param passScore   the normalised score at or above which the output passes
     * @param maxAttempts attempts in all
     * @param timeout     bound of one attempt (sending to the last byte of the answer)
     * @param temperature {@code temperature}
     * @param maxTokens   {@code max_tokens}, when given
     */
    record Settings(
            String name,
            URI uri,
            String model,
            Optional<String> apiKeyEnv,
            Optional<String> apiKey,
            RubricTemplate rubric,
            JudgeScale scale,
            double passScore,
            int maxAttempts,
            Duration timeout,
            double temperature,
            Optional<Integer> maxTokens) {
        @Override
        public String toString() {
            return "Judge[" + name + ", " + EndpointText.display(uri) + ", model=" + model + "]";
        }
    }

    private final int index;
    private final Settings settings;
    private final ChatCompletions client;
    private final ChatLimiter limiter;
    private final RetryPolicy policy;
    private final Duration maxRetryAfter;
    private final SecretValues secrets;
    private final String who;

    /** {@code env}'s secrets must include the judge's key. */
    JudgeEvaluator(int index, Settings settings, ChatCompletions client, AgentEnvironment env) {
        this(index, settings, client, env, ChatLimiter.NONE);
    }

    /** As above, every model call sent through {@code limiter} (the endpoint's, from {@link EndpointLimiters}). */
    JudgeEvaluator(int index, Settings settings, ChatCompletions client, AgentEnvironment env, ChatLimiter limiter) {
        this.limiter = limiter;
        this.index = index;
        this.settings = settings;
        this.client = client;
        this.policy = new RetryPolicy(
                settings.maxAttempts(),
                env.initialBackoff(),
                env.maxBackoff(),
                e -> e instanceof Failed f && f.retryable);
        this.maxRetryAfter = env.maxRetryAfter();
        this.secrets = env.secrets();
        this.who = "judge \"" + settings.name() + "\" (model " + settings.model() + " at "
                + EndpointText.display(settings.uri()) + ")";
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output) {
        return evaluate(caseRecord, caseTree, output, EvaluationContext.NONE);
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output, EvaluationContext context) {
        Optional<String> expected = Evaluator.expectedText(caseTree);
        if (settings.rubric().uses("expected") && expected.isEmpty()) {
            return Verdict.error(
                    EvaluatorErrorType.MISSING_EXPECTED,
                    who + ": its rubric uses {{expected}} and case \"" + Texts.oneLine(caseRecord.id(), 80)
                            + "\" has none; add expected to the case or limit the judge with applies_to");
        }
        ObjectNode request = request(caseRecord, caseTree, output, expected.orElse(""));
        byte[] body = Json.bytes(request);
        JsonNode observed = secrets.mask(request);
        List<TokenUsage> usage = new ArrayList<>();
        try {
            return policy.run(n -> attempt(n, body, observed, usage, context.observer()))
                    .withUsage(usage);
        } catch (Failed f) {
            if (f.type == EvaluatorErrorType.CANCELLED) {
                Thread.currentThread().interrupt();
            }
            return Verdict.error(f.type, f.getMessage()).withUsage(usage);
        } catch (CancelledException c) {
            // Interrupted while waiting between attempts; RetryPolicy has set the interrupt status again.
            return Verdict.error(
                            EvaluatorErrorType.CANCELLED,
                            who + " was cancelled while waiting to retry (the worker was interrupted)")
                    .withUsage(usage);
        }
    }

    /**
     * As {@link #evaluate(CaseRecord, JsonNode, String, EvaluationContext)}, without a thread while the model answers
     * (docs/execution.md, "Calls in flight"): each attempt is sent with the client's asynchronous send, its answer
     * handled on {@code work} by the same steps as a blocking attempt's, and the wait before a retry (the 429's
     * {@code Retry-After}, then the policy's full-jitter back-off) is a timer. Cancelling the future cancels the
     * request in flight; a call the run's limiter refuses ends {@code cancelled}, as in the blocking path.
     */
    @Override
    public CompletableFuture<Verdict> evaluateAsync(
            CaseRecord caseRecord, JsonNode caseTree, String output, EvaluationContext context, Executor work) {
        Optional<String> expected = Evaluator.expectedText(caseTree);
        if (settings.rubric().uses("expected") && expected.isEmpty()) {
            return CompletableFuture.completedFuture(evaluate(caseRecord, caseTree, output, context));
        }
        ObjectNode request = request(caseRecord, caseTree, output, expected.orElse(""));
        AsyncJudging j = new AsyncJudging(Json.bytes(request), secrets.mask(request), context.observer(), work);
        j.attempt(1);
        return j.out;
    }

    /** One asynchronous evaluation; its attempts run one after another, so its usage list needs no lock. */
    private final class AsyncJudging {
        final CompletableFuture<Verdict> out = new CompletableFuture<>();
        final AtomicReference<CompletableFuture<ChatExchange>> inFlight = new AtomicReference<>();
        final List<TokenUsage> usage = new ArrayList<>();
        final byte[] body;
        final JsonNode observed;
        final EvaluatorObserver observer;
        final Executor work;

        AsyncJudging(byte[] body, JsonNode observed, EvaluatorObserver observer, Executor work) {
            this.body = body;
            this.observed = observed;
            this.observer = observer;
            this.work = work;
            out.whenComplete((v, t) -> {
                CompletableFuture<ChatExchange> f = inFlight.get();
                if (out.isCancelled() && f != null) {
                    f.cancel(true);
                }
            });
        }

        void attempt(int n) {
            if (out.isDone()) {
                return;
            }
            try {
                observer.onModelRequest(index, settings.name(), n, observed);
                long t0 = System.nanoTime();
                CompletableFuture<ChatExchange> f = LimitedSend.sendAsync(client, call(body));
                inFlight.set(f);
                if (out.isCancelled()) {
                    f.cancel(true);
                    return;
                }
                f.whenCompleteAsync((x, t) -> answered(n, t0, x, t), work);
            } catch (RuntimeException | Error e) {
                out.completeExceptionally(e);
            }
        }

        private void answered(int n, long t0, ChatExchange x, Throwable t) {
            if (out.isDone()) {
                return;
            }
            try {
                if (t != null) {
                    Throwable cause = dev.vigilo.common.concurrent.Futures.cause(t);
                    if (cause instanceof CancelledException refused) {
                        // The run's limiter refused the call (its budget cannot cover it): nothing was sent.
                        throw new Failed(
                                EvaluatorErrorType.CANCELLED, who + " was not asked: " + refused.getMessage(), false);
                    }
                    // The client completes every ending normally; this is only a guard.
                    throw failed(n, "the connection failed (" + cause + ")", true);
                }
                out.complete(
                        JudgeEvaluator.this.answered(n, t0, x, usage, observer).withUsage(usage));
            } catch (Failed f) {
                if (!f.retryable || n >= settings.maxAttempts()) {
                    out.complete(Verdict.error(f.type, f.getMessage()).withUsage(usage));
                    return;
                }
                // As the blocking loop: the server's retry-after hint, then the policy's full-jitter back-off.
                long bound = policy.backoffBound(n + 1).toNanos();
                long wait = f.retryAfter.toNanos()
                        + (bound == 0 ? 0 : ThreadLocalRandom.current().nextLong(bound + 1));
                Runnable next = () -> attempt(n + 1);
                if (wait <= 0) {
                    work.execute(next);
                } else {
                    CompletableFuture.delayedExecutor(wait, TimeUnit.NANOSECONDS, work)
                            .execute(next);
                }
            } catch (RuntimeException | Error e) {
                out.completeExceptionally(e);
            }
        }
    }

    /**
     * The request: a system message saying how to answer, and the rendered rubric as the user message, followed by
     * the output when the rubric does not place {@code {{output}}} itself.
     */
    ObjectNode request(CaseRecord caseRecord, JsonNode caseTree, String output, String expected) {
        String rendered = settings.rubric().render(name -> switch (name) {
            case "input" -> text(caseTree.get("input"));
            case "output" -> output;
            case "expected" -> expected;
            case "case.id" -> caseRecord.id();
            default -> text(caseTree.path("metadata").get(name.substring("metadata.".length())));
        });
        String user = settings.rubric().uses("output") ? rendered : rendered + "\n\nThe answer to grade:\n" + output;
        String system = "You are an impartial grader. Grade the answer by the rubric in the user's message. Reply"
                + " with only a JSON object {\"score\": ..., \"reason\": ...} where "
                + settings.scale().instruction()
                + " and \"reason\" says briefly why.";
        ObjectNode schema = JsonNodeFactory.instance.objectNode();
        schema.put("type", "object");
        ObjectNode props = schema.putObject("properties");
        props.set("score", settings.scale().scoreSchema());
        props.putObject("reason").put("type", "string");
        schema.putArray("required").add("score").add("reason");
        schema.put("additionalProperties", false);
        return ChatRequest.of(settings.model(), List.of(ChatMessage.of("system", system), ChatMessage.of("user", user)))
                .withSampling(settings.maxTokens(), Optional.of(settings.temperature()))
                .withResponseFormat(Optional.of(ResponseFormat.jsonSchema("judgement", schema)))
                .toJson();
    }

    /** A placeholder's text: a string as is, other JSON compact, absent or null empty. */
    private static String text(JsonNode n) {
        if (n == null || n.isNull() || n.isMissingNode()) {
            return "";
        }
        return n.isTextual() ? n.asText() : Json.text(n);
    }

    private Verdict attempt(int n, byte[] body, JsonNode observed, List<TokenUsage> usage, EvaluatorObserver observer) {
        if (Thread.currentThread().isInterrupted()) {
            throw new Failed(EvaluatorErrorType.CANCELLED, who + " was not asked: the worker was interrupted", false);
        }
        observer.onModelRequest(index, settings.name(), n, observed);
        long t0 = System.nanoTime();
        ChatExchange x;
        try {
            x = LimitedSend.send(client, call(body));
        } catch (CancelledException refused) {
            // The run's limiter refused the call (its budget cannot cover it): nothing was sent.
            throw new Failed(EvaluatorErrorType.CANCELLED, who + " was not asked: " + refused.getMessage(), false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failed(EvaluatorErrorType.CANCELLED, who + " was cancelled (the worker was interrupted)", false);
        } catch (ExecutionException e) {
            // The client completes every ending normally; this is only a guard.
            throw failed(n, "the connection failed (" + e.getCause() + ")", true);
        }
        try {
            return answered(n, t0, x, usage, observer);
        } catch (Failed f) {
            if (n < settings.maxAttempts() && !f.retryAfter.isZero()) {
                waitRetryAfter(f.retryAfter);
            }
            throw f;
        }
    }

    /** One attempt's request, through the endpoint's limiter. */
    private ChatCall call(byte[] body) {
        return new ChatCall(
                settings.uri(),
                body,
                Map.of(),
                settings.apiKey(),
                settings.timeout(),
                CallEstimate.tokens(body, settings.maxTokens()),
                limiter);
    }

    /**
     * What attempt {@code n}'s exchange, sent at {@code t0}, comes to (both paths): the observer's response, the
     * usage, and the verdict, or the attempt's failure (a 429 carrying its capped {@code Retry-After}).
     */
    private Verdict answered(int n, long t0, ChatExchange x, List<TokenUsage> usage, EvaluatorObserver observer) {
        long millis = (System.nanoTime() - t0) / 1_000_000;
        JsonNode parsed = x.json().orElse(null);
        if (x.status() != 0) {
            observer.onModelResponse(
                    index,
                    settings.name(),
                    n,
                    x.status(),
                    parsed != null ? secrets.mask(parsed) : textNode(x.body()),
                    millis);
        } else {
            // No response: the observer still learns how the attempt ended (status 0, a text saying why).
            observer.onModelResponse(
                    index, settings.name(), n, 0, TextNode.valueOf(x.outcome().name()), millis);
        }
        if (parsed != null) {
            usage(parsed).ifPresent(usage::add);
        }
        String url = EndpointText.display(settings.uri());
        switch (x.outcome()) {
            case ANSWERED -> {
                return scored(n, parsed);
            }
            case NOT_JSON ->
                throw unscored(n, "answered HTTP " + x.status() + " with a body that is not JSON", x.body());
            case RATE_LIMITED -> {
                Duration wait = x.retryAfter(Instant.now())
                        .map(d -> d.compareTo(maxRetryAfter) > 0 ? maxRetryAfter : d)
                        .orElse(Duration.ZERO);
                throw failed(n, "answered 429 Too Many Requests" + detail(parsed, x.body()), true)
                        .after(wait);
            }
            case RETRYABLE_STATUS -> throw failed(n, "answered HTTP " + x.status() + detail(parsed, x.body()), true);
            case REJECTED ->
                throw failed(
                        n,
                        "answered HTTP " + x.status() + detail(parsed, x.body()) + "; "
                                + (x.status() == 401 || x.status() == 403
                                        ? settings.apiKeyEnv()
                                                .map(v -> "check the API key in $" + v)
                                                .orElse("set the judge's api_key_env")
                                        : "check the judge's url and model"),
                        false);
            case TOO_LARGE ->
                throw failed(n, "answered more than " + Texts.bytes(MAX_RESPONSE_BYTES) + "; set max_tokens", false);
            case TIMEOUT ->
                throw new Failed(
                        EvaluatorErrorType.TIMEOUT,
                        who + " did not answer within " + settings.timeout().toSeconds() + " s (attempt " + n + " of "
                                + settings.maxAttempts() + "); raise its timeout_seconds or check the endpoint's load",
                        true);
            case CONNECT_TIMEOUT, CONNECT_FAILED ->
                throw failed(n, "cannot be reached at " + url + " (" + reason(x) + "); check its url", true);
            case INVALID_CALL ->
                // The HTTP stack's own message is left out: it quotes the refused header, which is the key.
                throw failed(
                        n,
                        "cannot be sent: the HTTP client refuses the request's headers; check that "
                                + settings.apiKeyEnv().map(v -> "$" + v).orElse("the API key")
                                + " holds no line break or control character",
                        false);
            case CONNECTION_BROKEN, CANCELLED ->
                throw failed(n, "failed before the answer was complete (" + reason(x) + ")", true);
            default -> throw new IllegalStateException("unknown outcome " + x.outcome());
        }
    }

    /** The verdict of a 2xx JSON answer, or the unscored failure of an answer without a usable score. */
    private Verdict scored(int n, JsonNode root) {
        Optional<ChatChoice> first = ChatAnswer.parse(root).first();
        Optional<String> text = first.flatMap(ChatChoice::text);
        if (text.isEmpty()) {
            throw unscored(n, "answered without choices[0].message.content text", Json.bytes(root));
        }
        JudgeAnswers.Read read = JudgeAnswers.read(text.get(), settings.scale());
        if (read.scored() instanceof JudgeScale.Refused r) {
            throw unscored(n, r.why(), text.get().getBytes(StandardCharsets.UTF_8));
        }
        JudgeScale.Value v = (JudgeScale.Value) read.scored();
        boolean passed = v.normalised() >= settings.passScore();
        String reason = read.reason()
                .orElse("the judge gave " + Texts.oneLine(v.shown(), 40) + " on "
                        + settings.scale().describe() + " without a reason");
        return new Verdict(passed, v.normalised(), Optional.empty(), Optional.of(reason));
    }

    private Failed unscored(int n, String why, byte[] answer) {
        String masked = secrets.mask(new String(answer, 0, Math.min(answer.length, 4096), StandardCharsets.UTF_8));
        String line = Texts.oneLine(masked, Integer.MAX_VALUE - 1);
        // Masked again as a cut: what the cut leaves of a value at its end matches no mask afterwards.
        String quoted =
                line.length() > QUOTED ? secrets.maskCut(line.substring(0, QUOTED), false, true) + Reasons.CUT : line;
        return new Failed(
                EvaluatorErrorType.UNSCORED,
                who + " gave no usable score on " + settings.scale().describe() + " (attempt " + n + " of "
                        + settings.maxAttempts() + "): " + why + "; its answer: \"" + quoted
                        + "\"; make the rubric ask for the score plainly or use a model that supports"
                        + " response_format",
                true);
    }

    private Failed failed(int n, String what, boolean retryable) {
        return new Failed(
                EvaluatorErrorType.JUDGE_FAILED,
                who + " " + what + " (attempt " + n + " of " + settings.maxAttempts() + ")",
                retryable);
    }

    /** The tokens an answer reports, as the model it names (the requested one when it names none). */
    private Optional<TokenUsage> usage(JsonNode root) {
        String model =
                root.path("model").isTextual() && !root.path("model").asText().isBlank()
                        ? root.path("model").asText()
                        : settings.model();
        return Usage.of(root.get("usage"))
                .map(u -> new TokenUsage(
                        model, u.promptTokens(), u.completionTokens(), u.totalTokens(), u.cachedPromptTokens()));
    }

    private String detail(JsonNode parsed, byte[] bytes) {
        String text = parsed != null
                ? EndpointText.errorMessage(parsed).orElse(null)
                : bytes.length > 0 ? new String(bytes, 0, Math.min(bytes.length, 400), StandardCharsets.UTF_8) : null;
        if (text == null || text.isBlank()) {
            return "";
        }
        return ": \"" + Texts.oneLine(secrets.mask(text), 200) + "\"";
    }

    private JsonNode textNode(byte[] bytes) {
        String masked = secrets.mask(new String(bytes, StandardCharsets.UTF_8));
        return TextNode.valueOf(
                masked.length() > HttpAgent.MAX_OBSERVED_TEXT
                        ? masked.substring(0, HttpAgent.MAX_OBSERVED_TEXT)
                        : masked);
    }

    private static String reason(ChatExchange x) {
        Throwable t = x.cause().orElse(null);
        if (t == null) {
            return x.outcome().name().toLowerCase(java.util.Locale.ROOT);
        }
        String m = t.getMessage();
        return Texts.oneLine(m == null || m.isBlank() ? t.getClass().getSimpleName() : m, 160);
    }

    private void waitRetryAfter(Duration wait) {
        try {
            TimeUnit.NANOSECONDS.sleep(wait.toNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failed(
                    EvaluatorErrorType.CANCELLED,
                    who + " was cancelled while waiting to retry (the worker was interrupted)",
                    false);
        }
    }

    @Override
    public String toString() {
        return settings.toString();
    }

    /** Carries an attempt's error through {@link RetryPolicy#run}. */
    private static final class Failed extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient EvaluatorErrorType type;
        final boolean retryable;
        /** The server's hint to wait before the next attempt (a 429's capped {@code Retry-After}); zero: none. */
        final transient Duration retryAfter;

        Failed(EvaluatorErrorType type, String message, boolean retryable) {
            this(type, message, retryable, Duration.ZERO);
        }

        private Failed(EvaluatorErrorType type, String message, boolean retryable, Duration retryAfter) {
            super(message, null, false, false);
            this.type = type;
            this.retryable = retryable;
            this.retryAfter = retryAfter;
        }

        /** This failure with the server's wait hint. */
        Failed after(Duration wait) {
            return new Failed(type, getMessage(), retryable, wait);
        }
    }
}
