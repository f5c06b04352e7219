package dev.vigilo.common.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The canonical text of a JSON value (object keys sorted at every depth, no whitespace) and its SHA-256: the identity
 * of a request by its content, whatever order its keys were built in (response caches key on it).
 */
public final class CanonicalJson {
    private static final ObjectMapper MAPPER =
            new ObjectMapper().configure(JsonNodeFeature.WRITE_PROPERTIES_SORTED, true);

    private CanonicalJson() {}

    /** The canonical text of {@code n}. */
    public static String text(JsonNode n) {
        try {
            return MAPPER.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree could not be written: " + e.getMessage(), e);
        }
    }

    /** The lower-case hex SHA-256 of the UTF-8 bytes of {@link #text}. */
    public static String sha256Hex(JsonNode n) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(d.digest(text(n).getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
