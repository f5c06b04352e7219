package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A real, local OpenAI-compatible chat completions server for tests (JDK HTTP server on 127.0.0.1, an ephemeral
 * port). It answers {@code POST /v1/chat/completions} with scripted {@link Reply replies}: queued ones first, in
 * order, then the default answerer, which is deterministic: {@code "echo: <last user message>"} with word-count
 * usage. Replies can add latency, answer 429 with {@code Retry-After}, 5xx, malformed or truncated bodies, tool
 * calls, a judge's structured ({@link Reply#judgement}) or text ({@link Reply#content}) answers, or anything else. Every request is recorded (headers and parsed body) and counted, and the requests in flight (and
 * their peak) are counted too. Thread-safe; serves concurrent requests. Close it to stop it (replies still sleeping are interrupted).
 *
 * <pre>{@code
 * try (OpenAiTestServer server = OpenAiTestServer.start()) {
 *     server.enqueue(Reply.rateLimited(Duration.ofSeconds(1)), Reply.content("42"));
 *     ... agent with url: server.chatUrl() ...
 *     assertThat(server.requestCount()).isEqualTo(2);
 * }
 * }</pre>
 */
public final class OpenAiTestServer implements AutoCloseable {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final HttpServer server;
    private final ExecutorService executor;
    private final Deque<Reply> queue = new ArrayDeque<>();
    private final List<Request> requests = new ArrayList<>();
    private final AtomicInteger count = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger peakInFlight = new AtomicInteger();
    private final java.util.concurrent.atomic.AtomicLong answeredPromptTokens =
            new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong answeredCompletionTokens =
            new java.util.concurrent.atomic.AtomicLong();
    private volatile Function<Request, Reply> answerer = OpenAiTestServer::echo;

    private OpenAiTestServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /** Starts a server on 127.0.0.1 and an ephemeral port. */
    public static OpenAiTestServer start() {
        return start(InetAddress.getLoopbackAddress());
    }

    /**
     * Starts a server on {@code address} and an ephemeral port: for agents in other network namespaces, which reach
     * this machine only at such an address (MultiHostIT).
     */
    public static OpenAiTestServer start(InetAddress address) {
        // Without TCP_NODELAY the JDK server's separate header and body writes meet delayed ACKs: ~40 ms per answer.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        try {
            // A backlog for thousands of connections opened at once (CallsInFlightTest, bench/run exec inflight): with
            // 64, connections beyond it were refused under load and their cases errored without a request.
            HttpServer s = HttpServer.create(new InetSocketAddress(address, 0), 4096);
            ExecutorService ex = Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "openai-test-server");
                t.setDaemon(true);
                return t;
            });
            OpenAiTestServer o = new OpenAiTestServer(s, ex);
            s.setExecutor(ex);
            s.createContext("/", o::handle);
            s.start();
            return o;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code http://127.0.0.1:<port>/v1/chat/completions} (the address it listens on). */
    public URI chatUrl() {
        return URI.create("http://" + server.getAddress().getAddress().getHostAddress() + ":"
                + server.getAddress().getPort() + "/v1/chat/completions");
    }

    /** The next requests get these replies, in order (after any queued earlier). */
    public synchronized void enqueue(Reply... replies) {
        queue.addAll(List.of(replies));
    }

    /** Replaces the default answerer (used when the queue is empty). */
    public void answerWith(Function<Request, Reply> newAnswerer) {
        this.answerer = Objects.requireNonNull(newAnswerer, "newAnswerer");
    }

    /** Requests received so far, any path. */
    public int requestCount() {
        return count.get();
    }

    /** Requests received and not yet answered (or abandoned), any path. */
    public int inFlight() {
        return inFlight.get();
    }

    /** The most requests in flight at once so far, any path: what bounds a client's concurrency from outside. */
    public int peakInFlight() {
        return peakInFlight.get();
    }

    /**
     * The prompt tokens of every answer this server gave so far (the {@code usage} of each 2xx reply it began to write,
     * also one whose client had gone away): what an endpoint would charge for.
     */
    public long answeredPromptTokens() {
        return answeredPromptTokens.get();
    }

    /** The completion tokens of every answer this server gave so far, counted as {@link #answeredPromptTokens}. */
    public long answeredCompletionTokens() {
        return answeredCompletionTokens.get();
    }

    /** The requests received so far, in arrival order. */
    public synchronized List<Request> requests() {
        return List.copyOf(requests);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    /**
     * One received request.
     *
     * @param method  HTTP method
     * @param path    request path
     * @param headers header names in lower case, first value each
     * @param body    the parsed JSON body, or null when it is not JSON
     * @param bodyText the body as received (UTF-8), for assertions on the exact bytes sent
     */
    public record Request(String method, String path, Map<String, String> headers, JsonNode body, String bodyText) {
        /** The {@code Authorization} header, or null. */
        public String authorization() {
            return headers.get("authorization");
        }

        /** The messages sent, in order (an empty array when the body has none). */
        public JsonNode messages() {
            return body == null ? MAPPER.createArrayNode() : body.path("messages");
        }

        /** The role of the last message sent, or null. */
        public String lastRole() {
            JsonNode m = messages();
            return m.isArray() && m.size() > 0
                    ? m.get(m.size() - 1).path("role").asText()
                    : null;
        }

        /** The content of the last {@code user} message, or null. */
        public String lastUserMessage() {
            String last = null;
            if (body != null) {
                for (JsonNode m : body.path("messages")) {
                    if ("user".equals(m.path("role").asText())) {
                        last = m.path("content").asText();
                    }
                }
            }
            return last;
        }
    }

    /**
     * One scripted answer.
     *
     * @param status      HTTP status
     * @param body        body bytes
     * @param headers     extra headers
     * @param latency     wait before answering
     * @param missing     bytes promised by Content-Length but never sent (a truncated body), 0 for none
     */
    public record Reply(int status, byte[] body, Map<String, String> headers, Duration latency, int missing) {
        public Reply {
            headers = Map.copyOf(headers);
        }

        /** 200 with a chat completion whose message content is {@code content}, no usage. */
        public static Reply content(String content) {
            ObjectNode root = completion();
            root.withArray("choices")
                    .addObject()
                    .put("index", 0)
                    .put("finish_reason", "stop")
                    .putObject("message")
                    .put("role", "assistant")
                    .put("content", content);
            return json(200, root);
        }

        /**
         * 200 with a judge's structured answer: content {@code {"score": <score>, "reason": <reason>}} (a number or a
         * grade's letter as {@code score}), as an endpoint honouring {@code response_format} answers.
         */
        public static Reply judgement(Object score, String reason) {
            ObjectNode answer = MAPPER.createObjectNode();
            answer.set("score", MAPPER.valueToTree(score));
            answer.put("reason", reason);
            try {
                return content(MAPPER.writeValueAsString(answer));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** 200 with a message that calls one tool (content null). */
        public static Reply toolCall(String function, String argumentsJson) {
            ObjectNode root = completion();
            ObjectNode message = root.withArray("choices")
                    .addObject()
                    .put("index", 0)
                    .put("finish_reason", "tool_calls")
                    .putObject("message");
            message.put("role", "assistant").putNull("content");
            ObjectNode call = message.putArray("tool_calls").addObject();
            call.put("id", "call_1").put("type", "function");
            call.putObject("function").put("name", function).put("arguments", argumentsJson);
            return json(200, root);
        }

        /**
         * 200 with a message that calls several tools at once (content null): {@code idNameArguments} is the calls'
         * id, function name and arguments text, three strings per call; an empty id is left out of the call.
         */
        public static Reply toolCalls(String... idNameArguments) {
            if (idNameArguments.length % 3 != 0) {
                throw new IllegalArgumentException("give id, name and arguments per call");
            }
            ObjectNode root = completion();
            ObjectNode message = root.withArray("choices")
                    .addObject()
                    .put("index", 0)
                    .put("finish_reason", "tool_calls")
                    .putObject("message");
            message.put("role", "assistant").putNull("content");
            ArrayNode calls = message.putArray("tool_calls");
            for (int i = 0; i < idNameArguments.length; i += 3) {
                ObjectNode call = calls.addObject();
                if (!idNameArguments[i].isEmpty()) {
                    call.put("id", idNameArguments[i]);
                }
                call.put("type", "function");
                call.putObject("function").put("name", idNameArguments[i + 1]).put("arguments", idNameArguments[i + 2]);
            }
            return json(200, root);
        }

        /** 200 whose message content is a list of text parts. */
        public static Reply contentParts(String... parts) {
            ObjectNode root = completion();
            ArrayNode content = root.withArray("choices")
                    .addObject()
                    .put("index", 0)
                    .putObject("message")
                    .put("role", "assistant")
                    .putArray("content");
            for (String p : parts) {
                content.addObject().put("type", "text").put("text", p);
            }
            return json(200, root);
        }

        /** 429 with {@code Retry-After: <seconds>} (whole seconds) and an OpenAI-style error body. */
        public static Reply rateLimited(Duration retryAfter) {
            return error(429, "Rate limit reached, retry later")
                    .withHeader("Retry-After", Long.toString(retryAfter.toSeconds()));
        }

        /** {@code status} with an OpenAI-style error body {@code {"error": {"message": ...}}}. */
        public static Reply error(int status, String message) {
            ObjectNode root = MAPPER.createObjectNode();
            root.putObject("error").put("message", message).put("type", "test_error");
            return json(status, root);
        }

        /** {@code status} with exactly these body bytes (for example malformed JSON). */
        public static Reply raw(int status, String body) {
            return new Reply(status, body.getBytes(StandardCharsets.UTF_8), Map.of(), Duration.ZERO, 0);
        }

        /** 200 with a JSON body of this size (an endpoint that answers too much). */
        public static Reply hugeContent(int bytes) {
            return content("x".repeat(bytes));
        }

        /** 200 whose body stops early: Content-Length promises more than is sent, then the connection closes. */
        public static Reply truncated(String content) {
            Reply r = content(content);
            byte[] half = Arrays.copyOf(r.body(), r.body().length / 2);
            return new Reply(200, half, r.headers(), r.latency(), r.body().length - half.length);
        }

        /** The same reply after a wait. */
        public Reply withLatency(Duration wait) {
            return new Reply(status, body, headers, wait, missing);
        }

        /**
         * The same (JSON completion) reply naming {@code model} as the model that answered: usage is counted under
         * the model the answer names.
         */
        public Reply withModel(String model) {
            try {
                ObjectNode root = (ObjectNode) MAPPER.readTree(body);
                root.put("model", model);
                return new Reply(status, MAPPER.writeValueAsBytes(root), headers, latency, missing);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** The same reply with one more header. */
        public Reply withHeader(String name, String value) {
            Map<String, String> h = new LinkedHashMap<>(headers);
            h.put(name, value);
            return new Reply(status, body, h, latency, missing);
        }

        /** The same (JSON) reply with a {@code usage} object. */
        public Reply withUsage(long promptTokens, long completionTokens) {
            try {
                ObjectNode root = (ObjectNode) MAPPER.readTree(body);
                root.putObject("usage")
                        .put("prompt_tokens", promptTokens)
                        .put("completion_tokens", completionTokens)
                        .put("total_tokens", promptTokens + completionTokens);
                return new Reply(status, MAPPER.writeValueAsBytes(root), headers, latency, missing);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private static ObjectNode completion() {
            ObjectNode root = MAPPER.createObjectNode();
            root.put("id", "chatcmpl-test")
                    .put("object", "chat.completion")
                    .put("created", 0)
                    .put("model", "test");
            return root;
        }

        private static Reply json(int status, JsonNode root) {
            try {
                return new Reply(
                        status,
                        MAPPER.writeValueAsBytes(root),
                        Map.of("Content-Type", "application/json"),
                        Duration.ZERO,
                        0);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** The default answer: a deterministic function of the prompt. */
    private static Reply echo(Request r) {
        String prompt = r.lastUserMessage() == null ? "" : r.lastUserMessage();
        String content = "echo: " + prompt;
        return Reply.content(content).withUsage(words(prompt), words(content));
    }

    private static long words(String s) {
        return s.isBlank() ? 0 : s.strip().split("\\s+").length;
    }

    /** Counts the tokens a 2xx reply's {@code usage} reports. */
    private void count(Reply reply) {
        if (reply.status() / 100 != 2) {
            return;
        }
        try {
            JsonNode usage = MAPPER.readTree(reply.body()).path("usage");
            answeredPromptTokens.addAndGet(usage.path("prompt_tokens").asLong(0));
            answeredCompletionTokens.addAndGet(usage.path("completion_tokens").asLong(0));
        } catch (IOException e) {
            // Not JSON: nothing to count.
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        // In flight from arrival until the answer is written, its latency (and a blocking answerer) included.
        peakInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        try (exchange) {
            byte[] in = exchange.getRequestBody().readAllBytes();
            JsonNode body;
            try {
                body = MAPPER.readTree(in);
            } catch (IOException e) {
                body = null;
            }
            Map<String, String> headers = new LinkedHashMap<>();
            exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), v.get(0)));
            Request request = new Request(
                    exchange.getRequestMethod(),
                    exchange.getRequestURI().getPath(),
                    Map.copyOf(headers),
                    body,
                    new String(in, StandardCharsets.UTF_8));
            Reply reply;
            synchronized (this) {
                requests.add(request);
                reply = queue.poll();
            }
            count.incrementAndGet();
            if (reply == null) {
                reply = "/v1/chat/completions".equals(request.path()) && "POST".equals(request.method())
                        ? answerer.apply(request)
                        : Reply.error(404, "no such endpoint: " + request.method() + " " + request.path());
            }
            if (!reply.latency().isZero()) {
                try {
                    TimeUnit.NANOSECONDS.sleep(reply.latency().toNanos());
                } catch (InterruptedException e) {
                    return; // the server is closing
                }
            }
            count(reply);
            reply.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
            exchange.sendResponseHeaders(reply.status(), reply.body().length + (long) reply.missing());
            OutputStream out = exchange.getResponseBody();
            out.write(reply.body());
            out.flush();
            // With bytes missing, closing the exchange fails and drops the connection: the client sees a cut body.
        } catch (IOException e) {
            // The client went away (timeout, cancellation) or the body was cut on purpose.
        } finally {
            inFlight.decrementAndGet();
        }
    }
}
