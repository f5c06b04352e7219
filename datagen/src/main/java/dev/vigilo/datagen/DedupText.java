package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import com.ibm.icu.text.Normalizer2;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * The text a dedup step compares and its exact key. Normalised text: Unicode NFKC with full case folding (ICU's
 * {@code NFKC_Casefold}, so "Ｑｕｅｓｔｉｏｎ", "QUESTION" and "question" are one text), then every run of white
 * space (Unicode) replaced by one space and the ends trimmed. Pure functions: every process computes the same key for
 * the same value.
 */
final class DedupText {
    private static final Normalizer2 NFKC_CASEFOLD = Normalizer2.getNFKCCasefoldInstance();
    private static final Pattern WHITESPACE = Pattern.compile("\\s+", Pattern.UNICODE_CHARACTER_CLASS);

    private DedupText() {}

    /** The field's text: a string as is, another value as canonical JSON, missing or null as the empty text. */
    static String text(JsonNode value) {
        if (value == null || value.isNull() || value.isMissingNode()) {
            return "";
        }
        return value.isTextual() ? value.textValue() : Json.canonical(value);
    }

    /** NFKC, case folded, white space collapsed to single spaces, trimmed. */
    static String normalise(String text) {
        return WHITESPACE.matcher(NFKC_CASEFOLD.normalize(text)).replaceAll(" ").trim();
    }

    /** The exact method's key: hex SHA-256 of the normalised text's UTF-8 bytes. */
    static String exactKey(String text) {
        return HexFormat.of().formatHex(sha256(normalise(text).getBytes(StandardCharsets.UTF_8)));
    }

    static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
