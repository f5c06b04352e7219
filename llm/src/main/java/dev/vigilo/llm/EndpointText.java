package dev.vigilo.llm;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.SecretValues;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * What of an endpoint and its answers may go into a message: the URL without credentials, a body's text with the
 * caller's secret values masked (before any cut: a cut could leave a part of a secret that no mask matches), and
 * the error message an OpenAI-style error body carries.
 */
public final class EndpointText {
    private EndpointText() {}

    /** scheme://host[:port]/path: no user info or query, which may hold credentials. */
    public static String display(URI uri) {
        return uri.getScheme() + "://" + uri.getHost() + (uri.getPort() >= 0 ? ":" + uri.getPort() : "")
                + (uri.getRawPath() == null ? "" : uri.getRawPath());
    }

    /** The body as UTF-8 text with {@code secrets} masked; a caller cuts the result, never the body before it. */
    public static String masked(byte[] body, SecretValues secrets) {
        return secrets.mask(new String(body, StandardCharsets.UTF_8));
    }

    /**
     * The endpoint's own error message in a JSON error body: {@code error.message}, a string {@code error}, or a
     * top-level {@code message}; empty when there is none. Not masked.
     */
    public static Optional<String> errorMessage(JsonNode body) {
        JsonNode e = body.get("error");
        if (e != null && e.path("message").isTextual()) {
            return Optional.of(e.get("message").asText());
        }
        if (e != null && e.isTextual()) {
            return Optional.of(e.asText());
        }
        if (body.path("message").isTextual()) {
            return Optional.of(body.get("message").asText());
        }
        return Optional.empty();
    }
}
