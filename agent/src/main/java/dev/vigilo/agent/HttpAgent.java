package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.SecretValues;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The {@code http} agent (docs/formats/agent-protocol.md): one OpenAI-compatible chat completions request per
 * attempt. Thread-safe: one HTTP/1.1 client (and its connection pool) serves every concurrent call.
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
     * @param maxTokens    {@code max_tokens}, if given
     * @param temperature  {@code temperature}, if given
     * @param timeout      bound of a whole request (sending to last byte of the answer)
     * @param connectTimeout bound of connecting
     * @param maxAttempts  attempts in all
     */
    record Settings(
            URI uri,
            String model,
            Optional<String> apiKeyEnv,
            Optional<String> apiKey,
            Optional<String> systemPrompt,
            Optional<Integer> maxTokens,
            Optional<Double> temperature,
            Duration timeout,
            Duration connectTimeout,
            int maxAttempts) {
        @Override
        public String toString() {
            return "Settings[" + displayUrl(uri) + ", model=" + model + "]";
        }
    }

    private final Settings settings;
    private final String url;
    private final ExecutorService executor;
    private final HttpClient client;
    private final Attempts attempts;
    private final Duration maxRetryAfter;
    private final SecretValues secrets;

    /** {@code env}'s secrets must include the agent's own key (an endpoint may echo the request's headers). */
    HttpAgent(Settings settings, AgentEnvironment env) {
        this.settings = settings;
        this.url = displayUrl(settings.uri());
        this.executor = Executors.newCachedThreadPool(Threads.daemonFactory("http-agent"));
        this.client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(settings.connectTimeout())
                .followRedirects(HttpClient.Redirect.NEVER)
                .executor(executor)
                .build();
        this.attempts = new Attempts(settings.maxAttempts(), env);
        this.maxRetryAfter = env.maxRetryAfter();
        this.secrets = env.secrets();
    }

    @Override
    public AgentOutcome run(AgentCall call) {
        ObjectNode request = request(call.caseRecord());
        byte[] body = Json.bytes(request);
        return attempts.run(call.observer(), (n, observer) -> attempt(n, request, body, observer));
    }

    private ObjectNode request(CaseRecord c) {
        JsonNode input;
        try {
            JsonNode tree = Json.parse(c.json());
            input = tree.get("input");
        } catch (IOException e) {
            throw new InvalidInputException(
                    "case \"" + Texts.oneLine(c.id(), 80) + "\" is not a JSON object: " + Json.problem(e));
        }
        if (input == null) {
            throw new InvalidInputException("case \"" + Texts.oneLine(c.id(), 80) + "\" has no input");
        }
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode r = f.objectNode();
        r.put("model", settings.model());
        ArrayNode messages = r.putArray("messages");
        settings.systemPrompt()
                .ifPresent(sp -> messages.addObject().put("role", "system").put("content", sp));
        messages.addObject().put("role", "user").put("content", input.isTextual() ? input.asText() : Json.text(input));
        settings.maxTokens().ifPresent(t -> r.put("max_tokens", t));
        settings.temperature().ifPresent(t -> r.put("temperature", t));
        return r;
    }

    private Attempts.Result attempt(int n, ObjectNode request, byte[] body, AgentObserver observer) {
        HttpRequest.Builder b = HttpRequest.newBuilder(settings.uri())
                .timeout(settings.timeout())
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        settings.apiKey().ifPresent(k -> b.header("Authorization", "Bearer " + k));
        observer.onRequest(n, request);
        CompletableFuture<HttpResponse<byte[]>> future =
                client.sendAsync(b.build(), info -> new LimitedBody(MAX_RESPONSE_BYTES));
        HttpResponse<byte[]> response;
        try {
            response = future.get(settings.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            return failed(
                    AgentErrorType.CANCELLED, "request to " + url + " was cancelled (the worker was interrupted)");
        } catch (TimeoutException e) {
            future.cancel(true);
            return timedOut();
        } catch (ExecutionException e) {
            return transportFailure(e.getCause());
        }
        byte[] bytes = response.body();
        JsonNode parsed = parse(bytes);
        observer.onResponse(n, response.statusCode(), parsed != null ? parsed : textNode(bytes));
        int status = response.statusCode();
        if (status == 429) {
            Duration wait = retryAfter(response.headers().firstValue("Retry-After"));
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
                            + Texts.oneLine(secrets.mask(new String(bytes, StandardCharsets.UTF_8)), 120)
                            + "\"; check that agent.url is an OpenAI-compatible chat completions endpoint");
        }
        return answer(parsed, status);
    }

    /** Output from a 2xx chat completion. */
    private Attempts.Result answer(JsonNode root, int status) {
        JsonNode message = root.path("choices").path(0).path("message");
        if (!message.isObject()) {
            return failed(
                    AgentErrorType.INVALID_RESPONSE,
                    "POST " + url + " answered HTTP " + status + " without choices[0].message; check that agent.url"
                            + " is an OpenAI-compatible chat completions endpoint");
        }
        JsonNode content = message.get("content");
        JsonNode toolCalls = message.get("tool_calls");
        String output;
        if (content != null && content.isTextual()) {
            output = content.asText();
        } else if (content != null && content.isArray()) {
            StringBuilder text = new StringBuilder();
            for (JsonNode part : content) {
                if (!part.path("text").isTextual()) {
                    return failed(
                            AgentErrorType.INVALID_RESPONSE,
                            "POST " + url + " answered a content part without text; only text answers are supported");
                }
                text.append(part.get("text").asText());
            }
            output = text.toString();
        } else if ((content == null || content.isNull())
                && toolCalls != null
                && toolCalls.isArray()
                && !toolCalls.isEmpty()) {
            // No tools are offered or executed: the calls themselves are the answer evaluators can score.
            ObjectNode calls = JsonNodeFactory.instance.objectNode();
            calls.set("tool_calls", toolCalls);
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
        return Attempts.Result.ok(output, usage(root.get("usage")));
    }

    private static Optional<TokenUsage> usage(JsonNode u) {
        if (u == null || !u.isObject()) {
            return Optional.empty();
        }
        long p = Math.max(0, u.path("prompt_tokens").asLong(0));
        long c = Math.max(0, u.path("completion_tokens").asLong(0));
        long t = Math.max(0, u.path("total_tokens").asLong(p + c));
        return Optional.of(new TokenUsage(p, c, t));
    }

    private Attempts.Result timedOut() {
        return failed(
                AgentErrorType.TIMEOUT,
                "POST " + url + " did not answer within " + settings.timeout().toSeconds()
                        + " s; raise agent.timeout_seconds or check the endpoint's load");
    }

    private Attempts.Result transportFailure(Throwable cause) {
        if (cause instanceof LimitedBody.TooLarge) {
            return failed(
                    AgentErrorType.OUTPUT_TOO_LARGE,
                    "POST " + url + " answered a body larger than " + Texts.bytes(MAX_RESPONSE_BYTES)
                            + "; set agent.max_tokens");
        }
        if (cause instanceof HttpConnectTimeoutException) {
            return failed(
                    AgentErrorType.CONNECTION_FAILED,
                    "cannot connect to " + url + " within "
                            + settings.connectTimeout().toSeconds()
                            + " s; check agent.url and the network, or raise agent.connect_timeout_seconds");
        }
        if (cause instanceof HttpTimeoutException) {
            return timedOut();
        }
        if (cause instanceof ConnectException) {
            return failed(
                    AgentErrorType.CONNECTION_FAILED,
                    "cannot connect to " + url + " (" + reason(cause) + "); check agent.url and that the endpoint is"
                            + " up");
        }
        return failed(
                AgentErrorType.CONNECTION_FAILED,
                "the connection to " + url + " failed before the answer was complete (" + reason(cause)
                        + "); check the endpoint");
    }

    private static String reason(Throwable t) {
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
            JsonNode e = parsed.get("error");
            if (e != null && e.path("message").isTextual()) {
                text = e.get("message").asText();
            } else if (e != null && e.isTextual()) {
                text = e.asText();
            } else if (parsed.path("message").isTextual()) {
                text = parsed.get("message").asText();
            }
        } else if (bytes.length > 0) {
            String whole = secrets.mask(new String(bytes, StandardCharsets.UTF_8));
            text = whole.substring(0, Math.min(whole.length(), 400));
        }
        if (text == null || text.isBlank()) {
            return "";
        }
        return ": \"" + Texts.oneLine(secrets.mask(text), 200) + "\"";
    }

    private Duration retryAfter(Optional<String> header) {
        if (header.isEmpty()) {
            return Duration.ZERO;
        }
        String v = header.get().strip();
        Duration d;
        try {
            d = Duration.ofSeconds(Long.parseLong(v));
        } catch (NumberFormatException e) {
            try {
                d = Duration.between(ZonedDateTime.now(), ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME));
            } catch (DateTimeParseException x) {
                return Duration.ZERO;
            }
        }
        if (d.isNegative()) {
            return Duration.ZERO;
        }
        return d.compareTo(maxRetryAfter) > 0 ? maxRetryAfter : d;
    }

    private static JsonNode parse(byte[] bytes) {
        try {
            return Json.parse(bytes);
        } catch (IOException e) {
            return null;
        }
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
        return uri.getScheme() + "://" + uri.getHost() + (uri.getPort() >= 0 ? ":" + uri.getPort() : "")
                + (uri.getRawPath() == null ? "" : uri.getRawPath());
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }

    @Override
    public String toString() {
        return "HttpAgent[" + url + ", model=" + settings.model() + "]";
    }
}
