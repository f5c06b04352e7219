package dev.vigilo.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An OpenAI-compatible chat completions endpoint for the fleet limit tests: answers a case's question {@code q N}
 * with {@code a N} (and a usage), records when each request arrived and with which bearer key, and can be switched to
 * answer 429 (Retry-After 1 s) or to go away entirely (connections refused) and come back on the same port.
 */
final class CountingChatEndpoint implements AutoCloseable {
    /** One request: when it arrived ({@link System#nanoTime()}) and its {@code Authorization} header. */
    record Arrival(long nanos, String key) {}

    private static final Pattern QUESTION = Pattern.compile("q (\\d+)");

    private final int port;
    private final ConcurrentLinkedQueue<Arrival> arrivals = new ConcurrentLinkedQueue<>();
    private final AtomicInteger rateLimited = new AtomicInteger();
    private volatile boolean storm;
    private HttpServer server;
    private ExecutorService executor;

    CountingChatEndpoint() throws IOException {
        System.setProperty("sun.net.httpserver.nodelay", "true");
        this.server = listen(0);
        this.port = server.getAddress().getPort();
    }

    private HttpServer listen(int onPort) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), onPort), 128);
        executor = Executors.newFixedThreadPool(16, r -> {
            Thread t = new Thread(r, "counting-chat-endpoint");
            t.setDaemon(true);
            return t;
        });
        s.setExecutor(executor);
        s.createContext("/", this::handle);
        s.start();
        return s;
    }

    URI chatUrl() {
        return URI.create("http://127.0.0.1:" + port + "/v1/chat/completions");
    }

    /** Answers 429 with Retry-After 1 s while on. */
    void storm(boolean on) {
        storm = on;
    }

    /** The 429 answers given so far. */
    int rateLimited() {
        return rateLimited.get();
    }

    /** Stops listening: connections are refused until {@link #up()}. */
    synchronized void down() {
        if (server != null) {
            server.stop(0);
            executor.shutdownNow();
            server = null;
        }
    }

    /** Listens on the same port again. */
    synchronized void up() throws IOException {
        if (server == null) {
            server = listen(port);
        }
    }

    List<Arrival> arrivals() {
        return List.copyOf(arrivals);
    }

    /** Requests that arrived in {@code [from, to)} (nanoTime), by key. */
    Map<String, Integer> countByKey(long from, long to) {
        Map<String, Integer> out = new TreeMap<>();
        for (Arrival a : arrivals) {
            if (a.nanos() >= from && a.nanos() < to) {
                out.merge(a.key(), 1, Integer::sum);
            }
        }
        return out;
    }

    /** Requests per whole second since {@code from}, for messages. */
    Map<Long, Integer> perSecond(long from, long to) {
        Map<Long, Integer> out = new TreeMap<>();
        for (Arrival a : arrivals) {
            if (a.nanos() >= from && a.nanos() < to) {
                out.merge((a.nanos() - from) / 1_000_000_000L, 1, Integer::sum);
            }
        }
        return out;
    }

    private void handle(HttpExchange x) throws IOException {
        try (x) {
            byte[] body = x.getRequestBody().readAllBytes();
            String key = String.valueOf(x.getRequestHeaders().getFirst("Authorization"));
            arrivals.add(new Arrival(System.nanoTime(), key));
            if (storm) {
                rateLimited.incrementAndGet();
                x.getResponseHeaders().add("Retry-After", "1");
                reply(x, 429, "{\"error\":{\"message\":\"slow down\"}}");
                return;
            }
            Matcher m = QUESTION.matcher(new String(body, StandardCharsets.UTF_8));
            String answer = m.find() ? "a " + m.group(1) : "no question";
            reply(
                    x,
                    200,
                    "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
                            + "\"message\":{\"role\":\"assistant\",\"content\":\"" + answer
                            + "\"},\"finish_reason\":\"stop\"}],"
                            + "\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":3,\"total_tokens\":23}}");
        }
    }

    private static void reply(HttpExchange x, int status, String json) throws IOException {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().add("Content-Type", "application/json");
        x.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        down();
    }
}
