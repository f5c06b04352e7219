package dev.vigilo.web;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** A small HTTP client for tests: the JDK's for ordinary requests, a raw socket for requests it refuses to send. */
final class Http {
    private static final HttpClient CLIENT = HttpClient.newBuilder()
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    private Http() {}

    static HttpResponse<String> get(String url, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(b.GET().build());
    }

    static HttpResponse<String> post(String url, String form, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/x-www-form-urlencoded");
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(b.POST(HttpRequest.BodyPublishers.ofString(form)).build());
    }

    private static HttpResponse<String> send(HttpRequest r) {
        try {
            return CLIENT.send(r, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Sends {@code request} as written (CRLF line ends) and returns the status line and the rest. */
    static String raw(int port, String request) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) >= 0) {
                got.write(buf, 0, n);
                if (got.size() > 1 << 20) {
                    break;
                }
            }
            return got.toString(StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The status code of a raw response. */
    static int status(String rawResponse) {
        String[] first = rawResponse.split("\r\n", 2)[0].split(" ");
        return Integer.parseInt(first[1]);
    }
}
