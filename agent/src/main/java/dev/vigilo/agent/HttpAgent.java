package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.vigilo.agent.sandbox.SandboxAttempt;
import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.common.json.CanonicalJson;
import dev.vigilo.config.CasePlaceholders;
import dev.vigilo.config.Template;
import dev.vigilo.llm.ChatAnswer;
import dev.vigilo.llm.ChatCall;
import dev.vigilo.llm.ChatChoice;
import dev.vigilo.llm.ChatCompletions;
import dev.vigilo.llm.ChatExchange;
import dev.vigilo.llm.ChatLimiter;
import dev.vigilo.llm.ChatMessage;
import dev.vigilo.llm.ChatRequest;
import dev.vigilo.llm.EndpointText;
import dev.vigilo.llm.HttpOptions;
import dev.vigilo.llm.ToolCall;
import dev.vigilo.llm.Usage;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The {@code http} agent (docs/formats/agent-protocol.md): one OpenAI-compatible chat completions request per
 * attempt through the shared {@link ChatCompletions} client, whose endings this class words as {@link AgentError}s
 * (the retries are {@link Attempts}'). With {@code seed_per_epoch} the request's {@code seed} is the call's epoch, the
 * same on every attempt of the call. The messages sent are the system prompt (if any) and the case's input as the
 * user message, or the profile's {@code messages} rendered over the case ({@link Turn}). With {@code tools} an attempt
 * is a conversation: the tools are offered, the calls an answer makes are run ({@link ToolSet}) and their results sent
 * back as {@code tool} messages, until an answer calls no tool (its text is the output) or {@code max_turns} model
 * calls were made ({@link AgentErrorType#MAX_TURNS}). Thread-safe: one client (and its connection pool) serves every
 * concurrent call.
 */
final class HttpAgent implements Agent {
    /** The largest response body read. */
    static final int MAX_RESPONSE_BYTES = 8 << 20;
    /** How much of a body that is not JSON reaches the observer. */
    static final int MAX_OBSERVED_TEXT = 64 << 10;

    /**
     * Settings from the configuration's {@code agent} object.
     *
     * @param uri          the chat completions endpoint
     * @param model        the model name sent
     * @param apiKeyEnv    the variable the key was read from (for messages), if any
     * @param apiKey       the key, sent as a bearer token, if any; never printed
     * @param systemPrompt the system message, if any
     * @param messages     the {@code messages} template, if any (then no system prompt): the turns sent instead of
     *                     the system prompt and the input as the user message
     * @param maxTokens    {@code max_tokens}, if given
     * @param temperature  {@code temperature}, if given
     * @param timeout      bound of a whole request (sending to last byte of the answer)
     * @param connectTimeout bound of connecting
     * @param maxAttempts  attempts in all
     * @param seedPerEpoch {@code seed_per_epoch}: send the call's epoch as the request's {@code seed}; when false no
     *                     {@code seed} is sent
     * @param cache        {@code cache}: answer a request from the environment's {@link AnswerCache} when it holds
     *                     an answer to the identical request, and keep every answer used there
     * @param tools        the tools offered ({@link ToolSet#NONE}: one request per attempt, as without tools)
     * @param maxTurns     {@code max_turns}: the most model calls of one attempt with tools
     * @param mcpServers   {@code mcp_servers}: servers started per attempt, whose tools are offered beside
     *                     {@code tools}
     */
    record Settings(
            URI uri,
            String model,
            Optional<String> apiKeyEnv,
            Optional<String> apiKey,
            Optional<String> systemPrompt,
            Optional<List<Turn>> messages,
            Optional<Integer> maxTokens,
            Optional<Double> temperature,
            Duration timeout,
            Duration connectTimeout,
            int maxAttempts,
            boolean seedPerEpoch,
            boolean cache,
            ToolSet tools,
            int maxTurns,
            List<McpServerSpec> mcpServers) {
        @Override
        public String toString() {
            return "Settings[" + displayUrl(uri) + ", model=" + model + "]";
        }
    }

    /**
     * One turn of a {@code messages} template.
     *
     * @param role    system, user or assistant
     * @param content its text, whose placeholders are {@link CasePlaceholders}
     */
    record Turn(String role, Template content) {}

    private final Settings settings;
    private final ChatLimiter limiter;
    private final String url;
    private final ChatCompletions client;
    private final Attempts attempts;
    private final Duration maxRetryAfter;
    private final SecretValues secrets;
    private final AnswerCache answers;
    private final AgentEnvironment env;

    /** {@code env}'s secrets must include the agent's own key (an endpoint may echo the request's headers). */
    HttpAgent(Settings settings, AgentEnvironment env) {
        this(settings, env, ChatLimiter.NONE);
    }

    /** As above, every model call sent through {@code limiter} (the endpoint's, from {@link EndpointLimiters}). */
    HttpAgent(Settings settings, AgentEnvironment env, ChatLimiter limiter) {
        this.limiter = limiter;
        this.settings = settings;
        this.url = displayUrl(settings.uri());
        this.client = ChatCompletions.http(new HttpOptions(
                settings.connectTimeout(), MAX_RESPONSE_BYTES, HttpOptions.Oversized.ABORT, "http-agent"));
        this.attempts = new Attempts(settings.maxAttempts(), env);
        this.maxRetryAfter = env.maxRetryAfter();
        this.secrets = env.secrets();
        this.answers = settings.cache() ? env.answers() : AnswerCache.NONE;
        this.env = env;
    }

    @Override
    public AgentOutcome run(AgentCall call) {
        if (!settings.mcpServers().isEmpty()) {
            List<ChatMessage> first = messages(call.caseRecord());
            List<TokenUsage> spent = new ArrayList<>();
            return attempts.run(
                    call.observer(),
                    call.budget(),
                    (n, observer, left) ->
                            withMcp(n, first, call.epoch(), observer, left, call.budget(), spent, call.sandbox()));
        }
        if (!settings.tools().isEmpty()) {
            List<ChatMessage> first = messages(call.caseRecord());
            // Every model call of every attempt, for the per-case token and cost limits within an attempt.
            List<TokenUsage> spent = new ArrayList<>();
            return attempts.run(
                    call.observer(),
                    call.budget(),
                    (n, observer, left) -> conversation(
                            n,
                            first,
                            call.epoch(),
                            observer,
                            left,
                            call.budget(),
                            spent,
                            call.sandbox(),
                            settings.tools(),
                            List.of()));
        }
        // Built once per call: every attempt (retry) sends the same bytes, the same epoch's seed included.
        ObjectNode request = request(call.caseRecord(), call.epoch());
        byte[] body = Json.bytes(request);
        if (settings.cache()) {
            return cached(call, request, body);
        }
        return attempts.run(
                call.observer(),
                call.budget(),
                (n, observer, left) -> attempt(
                        n,
                        request,
                        body,
                        observer,
                        left.compareTo(settings.timeout()) < 0 ? left : settings.timeout()));
    }

    /**
     * Without tools, MCP servers or the answer cache (whose reads and writes block), a call holds no thread while its
     * request is in flight: the request is built on the caller's thread, sent asynchronously, and each answer handled
     * on {@code work} ({@link Attempts#runAsync}). Otherwise {@link #run} on {@code blocking}.
     */
    @Override
    public CompletableFuture<AgentOutcome> start(AgentCall call, ExecutorService blocking, Executor work) {
        if (!settings.mcpServers().isEmpty() || !settings.tools().isEmpty() || settings.cache()) {
            return Agent.super.start(call, blocking, work);
        }
        ObjectNode request;
        try {
            request = request(call.caseRecord(), call.epoch());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        byte[] body = Json.bytes(request);
        return attempts.runAsync(
                call.observer(),
                call.budget(),
                work,
                (n, observer, left) -> attemptAsync(
                        n,
                        request,
                        body,
                        observer,
                        left.compareTo(settings.timeout()) < 0 ? left : settings.timeout()));
    }

    /**
     * A call of an agent with {@code cache: true}: its first attempt is answered from the cache when it holds an
     * answer to this very request (nothing is sent, no tokens are paid: the outcome is marked cached and has no
     * usage); otherwise, and on the attempts after an unusable cached answer, it is sent, and the answer it used is
     * kept (masked, as everything the agent hands on).
     */
    private AgentOutcome cached(AgentCall call, ObjectNode request, byte[] body) {
        String key = cacheKey(request);
        Optional<byte[]> hit = answers.get(key);
        AtomicReference<JsonNode> used = new AtomicReference<>();
        AgentOutcome outcome = attempts.run(call.observer(), call.budget(), (n, observer, left) -> {
            if (n == 1 && hit.isPresent()) {
                observer.onRequest(n, request);
                observer.onCachedAnswer(n, key);
                JsonNode root;
                try {
                    root = Json.parse(hit.get());
                } catch (IOException e) {
                    return failed(
                            AgentErrorType.INVALID_RESPONSE,
                            "the cached answer " + key + " is not JSON; the request is sent instead");
                }
                observer.onResponse(n, 200, root);
                Attempts.Result r = answer(root, 200);
                return r.error().isPresent() ? r : r.fromCache();
            }
            AtomicReference<JsonNode> parsed = new AtomicReference<>();
            Attempts.Result r = attempt(
                    n,
                    request,
                    body,
                    observer,
                    left.compareTo(settings.timeout()) < 0 ? left : settings.timeout(),
                    parsed);
            if (r.output().isPresent()) {
                used.set(parsed.get());
            }
            return r;
        });
        JsonNode answer = used.get();
        if (outcome.status() == AgentOutcome.Status.OK && !outcome.cached() && answer != null) {
            answers.put(key, secrets.mask(Json.text(answer)).getBytes(StandardCharsets.UTF_8));
        }
        return outcome;
    }

    /**
     * The cache key of a request: the hex SHA-256 of the canonical JSON (keys sorted) of the endpoint URL without
     * credentials or query and the request body. The key (a header) is never part of it.
     */
    String cacheKey(ObjectNode request) {
        ObjectNode k = JsonNodeFactory.instance.objectNode();
        k.put("url", url);
        k.set("request", request);
        return CanonicalJson.sha256Hex(k);
    }

    private ObjectNode request(CaseRecord c, int epoch) {
        return request(messages(c), epoch);
    }

    /** The first messages of a call: the template rendered over the case, or the system prompt and the input. */
    private List<ChatMessage> messages(CaseRecord c) {
        JsonNode tree;
        try {
            tree = Json.parse(c.json());
        } catch (IOException e) {
            throw new InvalidInputException(
                    "case \"" + Texts.oneLine(c.id(), 80) + "\" is not a JSON object: " + Json.problem(e));
        }
        JsonNode input = tree.get("input");
        if (input == null) {
            throw new InvalidInputException("case \"" + Texts.oneLine(c.id(), 80) + "\" has no input");
        }
        List<ChatMessage> messages = new ArrayList<>();
        if (settings.messages().isPresent()) {
            for (Turn t : settings.messages().get()) {
                messages.add(ChatMessage.of(t.role(), t.content().render(name -> CasePlaceholders.value(name, tree))));
            }
        } else {
            settings.systemPrompt().ifPresent(sp -> messages.add(ChatMessage.of("system", sp)));
            messages.add(ChatMessage.of("user", input.isTextual() ? input.asText() : Json.text(input)));
        }
        return messages;
    }

    private ObjectNode request(List<ChatMessage> messages, int epoch) {
        return request(messages, epoch, settings.tools());
    }

    private ObjectNode request(List<ChatMessage> messages, int epoch, ToolSet tools) {
        ChatRequest r = ChatRequest.of(settings.model(), messages)
                .withSampling(settings.maxTokens(), settings.temperature())
                // Without seed_per_epoch no seed key at all: the bytes sent for such profiles stay what they were.
                .withSeed(settings.seedPerEpoch() ? Optional.of((long) epoch) : Optional.empty());
        if (!tools.isEmpty()) {
            r = r.withTools(tools.definitions());
            if (!tools.parallel()) {
                r = r.withParameters(JsonNodeFactory.instance.objectNode().put("parallel_tool_calls", false));
            }
        }
        return r.toJson();
    }

    /**
     * One attempt of an agent with {@code mcp_servers}: the servers started (in the case's sandbox when there is
     * one), their tools listed and offered beside the command tools for one {@link #conversation}, and the servers
     * stopped with their process trees at the end. A server that cannot start, fails initialize or tools/list, or
     * lists a tool name already offered, fails the attempt with {@link AgentErrorType#MCP_SERVER_FAILED}.
     */
    private Attempts.Result withMcp(
            int n,
            List<ChatMessage> first,
            int epoch,
            AgentObserver observer,
            Duration left,
            CaseBudget budget,
            List<TokenUsage> spent,
            Optional<SandboxAttempt> sandbox) {
        long deadline = System.nanoTime() + left.toNanos();
        List<McpServer> servers = new ArrayList<>();
        try {
            List<Tool> tools = new ArrayList<>(settings.tools().tools());
            Map<String, String> offeredBy = new LinkedHashMap<>();
            tools.forEach(t -> offeredBy.put(t.definition().name(), "agent.tools"));
            for (McpServerSpec spec : settings.mcpServers()) {
                McpServer server;
                try {
                    server = McpServer.start(
                            spec, env, sandbox, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
                } catch (McpServer.Failure e) {
                    return failed(AgentErrorType.MCP_SERVER_FAILED, e.getMessage());
                }
                servers.add(server);
                for (Tool t : server.tools()) {
                    String name = t.definition().name();
                    String before = offeredBy.putIfAbsent(name, "MCP server " + spec.name());
                    if (before != null) {
                        return failed(
                                AgentErrorType.MCP_SERVER_FAILED,
                                "MCP server " + spec.name() + " lists tool \"" + Texts.oneLine(name, 80) + "\", which "
                                        + before + " offers already; a tool name must be offered once");
                    }
                    tools.add(t);
                }
            }
            try (ToolSet set = new ToolSet(tools, settings.tools().parallel())) {
                return conversation(
                        n,
                        first,
                        epoch,
                        observer,
                        Duration.ofNanos(deadline - System.nanoTime()),
                        budget,
                        spent,
                        sandbox,
                        set,
                        servers);
            }
        } finally {
            servers.forEach(McpServer::close);
        }
    }

    /**
     * One attempt of an agent with tools: model calls until an answer calls no tool, each call's tools run and their
     * results appended as {@code tool} messages. Each request is bounded by {@code timeout_seconds}, the whole
     * attempt by {@code left} (the case's time); the case's token and cost limits are checked after every model
     * call over {@code spent} (every model call of the call so far).
     */
    private Attempts.Result conversation(
            int n,
            List<ChatMessage> first,
            int epoch,
            AgentObserver observer,
            Duration left,
            CaseBudget budget,
            List<TokenUsage> spent,
            Optional<SandboxAttempt> sandbox,
            ToolSet tools,
            List<McpServer> servers) {
        long deadline = System.nanoTime() + left.toNanos();
        List<ChatMessage> messages = new ArrayList<>(first);
        List<TokenUsage> usage = new ArrayList<>();
        List<AgentToolCall> made = new ArrayList<>();
        for (int turn = 1; ; turn++) {
            Duration remaining = Duration.ofNanos(deadline - System.nanoTime());
            if (remaining.isNegative() || remaining.isZero()) {
                return failed(
                                AgentErrorType.TIMEOUT,
                                "the attempt ran out of time after " + (turn - 1) + " model calls")
                        .withUsage(usage);
            }
            ObjectNode request = request(messages, epoch, tools);
            AtomicReference<JsonNode> answered = new AtomicReference<>();
            Attempts.Result r = attempt(
                    n,
                    request,
                    Json.bytes(request),
                    observer,
                    remaining.compareTo(settings.timeout()) < 0 ? remaining : settings.timeout(),
                    answered);
            usage.addAll(r.usage());
            spent.addAll(r.usage());
            if (r.error().isPresent()) {
                return r.withUsage(usage);
            }
            ChatChoice choice = ChatAnswer.parse(answered.get()).first().orElseThrow();
            if (choice.toolCalls().isEmpty()) {
                return r.withUsage(usage).withToolCalls(made);
            }
            Optional<String> over = budget.exceededBy(spent);
            if (over.isPresent()) {
                return Attempts.Result.failed(new AgentError(
                                AgentErrorType.LIMIT_EXCEEDED,
                                over.get() + "; stopped after model call " + turn + " of attempt " + n,
                                false))
                        .withUsage(usage);
            }
            if (turn >= settings.maxTurns()) {
                return Attempts.Result.failed(AgentError.of(
                                AgentErrorType.MAX_TURNS,
                                "the model still called tools after agent.max_turns (" + settings.maxTurns()
                                        + ") model calls; raise agent.max_turns or check what the tools answered"))
                        .withUsage(usage);
            }
            List<ToolCall> calls = new ArrayList<>();
            List<ToolSet.Call> toRun = new ArrayList<>();
            for (int i = 0; i < choice.toolCalls().size(); i++) {
                ToolCall c = choice.toolCalls().get(i);
                String id = c.id().filter(s -> !s.isEmpty()).orElse("call_" + turn + "_" + (i + 1));
                calls.add(new ToolCall(Optional.of(id), c.name(), c.arguments()));
                toRun.add(new ToolSet.Call(id, c.name(), c.arguments()));
            }
            Optional<String> text = choice.contentKind() == ChatChoice.ContentKind.TEXT
                            || choice.contentKind() == ChatChoice.ContentKind.PARTS
                    ? choice.text().filter(t -> !t.isEmpty())
                    : Optional.empty();
            messages.add(new ChatMessage("assistant", text, calls, Optional.empty()));
            List<ToolResult> results =
                    tools.run(toRun, Duration.ofNanos(Math.max(1, deadline - System.nanoTime())), sandbox);
            for (int i = 0; i < toRun.size(); i++) {
                ToolSet.Call c = toRun.get(i);
                ToolResult res = results.get(i);
                if (res.cancelled()) {
                    Thread.currentThread().interrupt();
                    return failed(
                                    AgentErrorType.CANCELLED,
                                    "tool " + c.name() + " was cancelled (the worker was interrupted)")
                            .withUsage(usage);
                }
                observer.onToolResult(n, c.id(), c.name(), res.content(), res.isError());
                messages.add(ChatMessage.toolResult(c.id(), res.content()));
                made.add(new AgentToolCall(c.id(), c.name(), c.arguments()));
            }
            for (McpServer server : servers) {
                Optional<String> died = server.failure();
                if (died.isPresent()) {
                    return failed(AgentErrorType.MCP_SERVER_FAILED, died.get())
                            .withUsage(usage)
                            .withToolCalls(made);
                }
            }
        }
    }

    /** One request, aborted after {@code limit} (the timeout, or less when the case's time ends). */
    private Attempts.Result attempt(int n, ObjectNode request, byte[] body, AgentObserver observer, Duration limit) {
        return attempt(n, request, body, observer, limit, new AtomicReference<>());
    }

    /** One request; a 2xx JSON answer is left in {@code answered} (the cache keeps the one an output came from). */
    private Attempts.Result attempt(
            int n,
            ObjectNode request,
            byte[] body,
            AgentObserver observer,
            Duration limit,
            AtomicReference<JsonNode> answered) {
        observer.onRequest(n, request);
        ChatCall chatCall = chatCall(body, limit);
        ChatExchange x;
        try {
            x = LimitedSend.send(client, chatCall);
        } catch (CancelledException refused) {
            // The run's limiter refused the call (its budget cannot cover it): nothing was sent.
            return failed(AgentErrorType.CANCELLED, "request to " + url + " was not sent: " + refused.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return failed(
                    AgentErrorType.CANCELLED, "request to " + url + " was cancelled (the worker was interrupted)");
        } catch (ExecutionException e) {
            // The client completes every ending normally; this is only a guard.
            return brokenConnection(e.getCause());
        }
        return exchanged(n, x, observer, answered);
    }

    private ChatCall chatCall(byte[] body, Duration limit) {
        return new ChatCall(
                settings.uri(),
                body,
                Map.of(),
                settings.apiKey(),
                limit,
                CallEstimate.tokens(body, settings.maxTokens()),
                limiter);
    }

    /** As {@link #attempt}, the request in flight without a thread; the answer is handled where it completes. */
    private CompletableFuture<Attempts.Result> attemptAsync(
            int n, ObjectNode request, byte[] body, AgentObserver observer, Duration limit) {
        observer.onRequest(n, request);
        CompletableFuture<ChatExchange> sent = LimitedSend.sendAsync(client, chatCall(body, limit));
        CompletableFuture<Attempts.Result> out = new CompletableFuture<>();
        out.whenComplete((r, t) -> {
            if (out.isCancelled()) {
                sent.cancel(true);
            }
        });
        sent.whenComplete((x, t) -> {
            if (t == null) {
                try {
                    out.complete(exchanged(n, x, observer, new AtomicReference<>()));
                } catch (RuntimeException e) {
                    out.completeExceptionally(e);
                }
                return;
            }
            Throwable cause = Futures.cause(t);
            if (cause instanceof CancelledException refused) {
                // The run's limiter refused the call (its budget cannot cover it): nothing was sent.
                out.complete(failed(
                        AgentErrorType.CANCELLED, "request to " + url + " was not sent: " + refused.getMessage()));
            } else {
                out.completeExceptionally(cause);
            }
        });
        return out;
    }

    /** What an attempt's exchange {@code x} makes of it; a 2xx JSON answer is left in {@code answered}. */
    private Attempts.Result exchanged(
            int n, ChatExchange x, AgentObserver observer, AtomicReference<JsonNode> answered) {
        Optional<Attempts.Result> failure = transportFailure(x);
        if (failure.isPresent()) {
            return failure.get();
        }
        byte[] bytes = x.body();
        JsonNode parsed = x.json().orElse(null);
        observer.onResponse(n, x.status(), parsed != null ? parsed : textNode(bytes));
        int status = x.status();
        if (status == 429) {
            Duration wait = x.retryAfter(Instant.now())
                    .map(d -> d.compareTo(maxRetryAfter) > 0 ? maxRetryAfter : d)
                    .orElse(Duration.ZERO);
            return Attempts.Result.failed(
                    AgentError.of(
                            AgentErrorType.RATE_LIMITED,
                            "POST " + url + " answered 429 Too Many Requests" + detail(parsed, bytes)
                                    + "; lower --concurrency or raise the endpoint's rate limit"),
                    wait);
        }
        if (status < 200 || status > 299) {
            boolean retryable = status == 408 || status >= 500;
            return Attempts.Result.failed(new AgentError(
                    AgentErrorType.HTTP_STATUS,
                    "POST " + url + " answered HTTP " + status + detail(parsed, bytes) + "; " + advice(status),
                    retryable));
        }
        if (parsed == null) {
            return failed(
                    AgentErrorType.INVALID_RESPONSE,
                    "POST " + url + " answered HTTP " + status + " with a body that is not JSON: \""
                            + Texts.oneLine(EndpointText.masked(bytes, secrets), 120)
                            + "\"; check that agent.url is an OpenAI-compatible chat completions endpoint");
        }
        answered.set(parsed);
        return answer(parsed, status).withUsage(usage(parsed));
    }

    /**
     * The tokens an answer reports, as the model it names (the requested one when it names none): what pricing and
     * the per-case limits count, for an answer the agent could not use too.
     */
    private Optional<TokenUsage> usage(JsonNode root) {
        String model =
                root.path("model").isTextual() && !root.path("model").asText().isBlank()
                        ? root.path("model").asText()
                        : settings.model();
        return Usage.of(root.get("usage"))
                .map(u -> new TokenUsage(
                        model, u.promptTokens(), u.completionTokens(), u.totalTokens(), u.cachedPromptTokens()));
    }

    /** Output from a 2xx chat completion (its usage is added by the caller). */
    private Attempts.Result answer(JsonNode root, int status) {
        Optional<ChatChoice> first = ChatAnswer.parse(root).first();
        if (first.isEmpty() || !first.get().message().isObject()) {
            return failed(
                    AgentErrorType.INVALID_RESPONSE,
                    "POST " + url + " answered HTTP " + status + " without choices[0].message; check that agent.url"
                            + " is an OpenAI-compatible chat completions endpoint");
        }
        ChatChoice choice = first.get();
        String output;
        if (choice.contentKind() == ChatChoice.ContentKind.TEXT) {
            output = choice.text().orElseThrow();
        } else if (choice.contentKind() == ChatChoice.ContentKind.PARTS) {
            if (choice.parts().stream().anyMatch(p -> p.text().isEmpty())) {
                return failed(
                        AgentErrorType.INVALID_RESPONSE,
                        "POST " + url + " answered a content part without text; only text answers are supported");
            }
            output = choice.text().orElseThrow();
        } else if (choice.contentKind() == ChatChoice.ContentKind.ABSENT
                && !choice.toolCalls().isEmpty()) {
            // No tools are offered or executed: the calls themselves (as sent) are the answer evaluators can score.
            ObjectNode calls = JsonNodeFactory.instance.objectNode();
            calls.set("tool_calls", choice.message().get("tool_calls"));
            output = Json.text(calls);
        } else {
            return failed(
                    AgentErrorType.INVALID_RESPONSE,
                    "POST " + url + " answered a message with neither text content nor tool calls");
        }
        int size = CommandAgent.utf8Length(output);
        if (size > MAX_OUTPUT_BYTES) {
            return Attempts.Result.failed(AgentError.of(
                    AgentErrorType.OUTPUT_TOO_LARGE,
                    "POST " + url + " answered " + size + " bytes; an output may be at most "
                            + Texts.bytes(MAX_OUTPUT_BYTES) + " (set agent.max_tokens)"));
        }
        return Attempts.Result.ok(output);
    }

    private Attempts.Result timedOut() {
        return failed(
                AgentErrorType.TIMEOUT,
                "POST " + url + " did not answer within " + settings.timeout().toSeconds()
                        + " s; raise agent.timeout_seconds or check the endpoint's load");
    }

    /** The failure of an exchange that ended without a response to look at; empty when it has one. */
    private Optional<Attempts.Result> transportFailure(ChatExchange x) {
        Throwable cause = x.cause().orElse(null);
        return switch (x.outcome()) {
            case ANSWERED, NOT_JSON, RATE_LIMITED, RETRYABLE_STATUS, REJECTED -> Optional.empty();
            case TOO_LARGE ->
                Optional.of(failed(
                        AgentErrorType.OUTPUT_TOO_LARGE,
                        "POST " + url + " answered a body larger than " + Texts.bytes(MAX_RESPONSE_BYTES)
                                + "; set agent.max_tokens"));
            case CONNECT_TIMEOUT ->
                Optional.of(failed(
                        AgentErrorType.CONNECTION_FAILED,
                        "cannot connect to " + url + " within "
                                + settings.connectTimeout().toSeconds()
                                + " s; check agent.url and the network, or raise agent.connect_timeout_seconds"));
            case TIMEOUT -> Optional.of(timedOut());
            case CONNECT_FAILED ->
                Optional.of(failed(
                        AgentErrorType.CONNECTION_FAILED,
                        "cannot connect to " + url + " (" + reason(cause) + "); check agent.url and that the"
                                + " endpoint is up"));
            case INVALID_CALL ->
                // The same request would be refused again: not retried. The HTTP stack's own message is left out: it
                // quotes the refused header, which is the key.
                Optional.of(Attempts.Result.failed(new AgentError(
                        AgentErrorType.CONNECTION_FAILED,
                        "POST " + url + " cannot be sent: the HTTP client refuses the request's headers; check that "
                                + settings.apiKeyEnv().map(v -> "$" + v).orElse("the API key")
                                + " holds no line break or control character",
                        false)));
            case CONNECTION_BROKEN, CANCELLED -> Optional.of(brokenConnection(cause));
        };
    }

    private Attempts.Result brokenConnection(Throwable cause) {
        return failed(
                AgentErrorType.CONNECTION_FAILED,
                "the connection to " + url + " failed before the answer was complete (" + reason(cause)
                        + "); check the endpoint");
    }

    private static String reason(Throwable t) {
        if (t == null) {
            return "no cause";
        }
        String m = t.getMessage();
        return Texts.oneLine(m == null || m.isBlank() ? t.getClass().getSimpleName() : m, 160);
    }

    private String advice(int status) {
        return switch (status) {
            case 401, 403 ->
                settings.apiKeyEnv()
                        .map(v -> "check the API key in $" + v)
                        .orElse("set agent.api_key_env to the variable holding the API key");
            case 404 -> "check agent.url and agent.model";
            case 408 -> "the endpoint timed out the request";
            default -> status >= 500 ? "the endpoint failed" : "the endpoint rejected the request";
        };
    }

    /**
     * ": <the endpoint's error message>" from an error body, bounded; empty when there is nothing useful. Masked
     * before it is cut: a cut could leave a part of a secret that no mask matches.
     */
    private String detail(JsonNode parsed, byte[] bytes) {
        String text = null;
        if (parsed != null) {
            text = EndpointText.errorMessage(parsed).orElse(null);
        } else if (bytes.length > 0) {
            String whole = EndpointText.masked(bytes, secrets);
            text = whole.substring(0, Math.min(whole.length(), 400));
        }
        if (text == null || text.isBlank()) {
            return "";
        }
        return ": \"" + Texts.oneLine(secrets.mask(text), 200) + "\"";
    }

    /** At most {@link #MAX_OBSERVED_TEXT} of a body that is not JSON, masked before it is cut. */
    private JsonNode textNode(byte[] bytes) {
        byte[] masked = secrets.mask(new String(bytes, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
        return TextNode.valueOf(
                new String(masked, 0, Math.min(masked.length, MAX_OBSERVED_TEXT), StandardCharsets.UTF_8));
    }

    private static Attempts.Result failed(AgentErrorType type, String message) {
        return Attempts.Result.failed(AgentError.of(type, message));
    }

    /** scheme://host[:port]/path: no user info or query, which may hold credentials. */
    static String displayUrl(URI uri) {
        return EndpointText.display(uri);
    }

    @Override
    public void close() {
        try {
            settings.tools().close();
        } finally {
            client.close();
        }
    }

    @Override
    public String toString() {
        return "HttpAgent[" + url + ", model=" + settings.model() + "]";
    }
}
