package dev.vigilo.llm;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A real local HTTP endpoint for the client's tests (JDK HTTP server on 127.0.0.1, an ephemeral port): every POST is
 * recorded and answered by the test's handler. {@link #hold()} makes a handler wait until the endpoint is closed (a
 * slow endpoint without a sleep). Close it to stop it.
 */
final class TestEndpoint implements AutoCloseable {
    /** A request as received. */
    record Received(String method, List<String> headerNames, com.sun.net.httpserver.Headers headers, byte[] body) {}

    /** Answers one exchange. */
    @FunctionalInterface
    interface Handler {
        void handle(HttpExchange exchange) throws IOException;
    }

    private final HttpServer server;
    private final ExecutorService executor;
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final CountDownLatch closed = new CountDownLatch(1);
    private final CountDownLatch arrived = new CountDownLatch(1);

    TestEndpoint(Handler handler) {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        executor = Executors.newCachedThreadPool();
        server.setExecutor(executor);
        server.createContext("/", x -> {
            byte[] body = x.getRequestBody().readAllBytes();
            received.add(new Received(
                    x.getRequestMethod(), List.copyOf(x.getRequestHeaders().keySet()), x.getRequestHeaders(), body));
            arrived.countDown();
            try {
                handler.handle(x);
            } finally {
                x.close();
            }
        });
        server.start();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/v1/chat/completions");
    }

    List<Received> received() {
        return received;
    }

    /** Waits until the first request has arrived. */
    void awaitRequest() throws InterruptedException {
        arrived.await();
    }

    /** Blocks the calling handler until the endpoint is closed. */
    void hold() {
        try {
            closed.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void reply(HttpExchange x, int status, String body, String... headers) throws IOException {
        for (int i = 0; i < headers.length; i += 2) {
            x.getResponseHeaders().add(headers[i], headers[i + 1]);
        }
        byte[] b = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        x.sendResponseHeaders(status, b.length == 0 ? -1 : b.length);
        if (b.length > 0) {
            x.getResponseBody().write(b);
        }
    }

    @Override
    public void close() {
        closed.countDown();
        server.stop(0);
        executor.shutdownNow();
    }
}
