package dev.vigilo.sessionlog;

import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.charset.StandardCharsets;

/**
 * JSON as JavaScript's JSON.parse sees it: UTF-8 decoded with replacement, no BOM skipping, duplicate keys last
 * wins, no length limits, numbers compared by value. One shared immutable mapper (thread-safe).
 */
final class Json {
    static final long MAX_SAFE = 9007199254740991L;
    static final ObjectMapper MAPPER = JsonMapper.builder(new com.fasterxml.jackson.core.JsonFactoryBuilder()
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxStringLength(Integer.MAX_VALUE)
                            .maxNumberLength(Integer.MAX_VALUE)
                            .maxNestingDepth(
                                    1_000_000) // tree building is iterative; JSON.parse has no small limit either
                            .maxNameLength(Integer.MAX_VALUE)
                            .maxDocumentLength(-1)
                            .build())
                    .characterEscapes(new JsEscapes())
                    // JSON.stringify writes a surrogate pair as the 4-byte UTF-8 character, Jackson by default as two
                    // escapes
                    .enable(com.fasterxml.jackson.core.json.JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
                    .build())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
            .build();

    private Json() {}

    /**
     * Output escaping of JSON.stringify: the short escapes for \b \t \n \f \r, a backslash-u-00xx escape in LOWER-case hex
     * for the other control characters (Jackson's default is upper-case), nothing else escaped. Needed for the
     * writer's bytes to equal the official writer's (ANSI escapes in tool output are common).
     */
    private static final class JsEscapes extends com.fasterxml.jackson.core.io.CharacterEscapes {
        private static final int[] ASCII = standardAsciiEscapesForJSON();
        private static final com.fasterxml.jackson.core.SerializableString[] LOWER =
                new com.fasterxml.jackson.core.SerializableString[0x20];

        static {
            for (int c = 0; c < 0x20; c++) {
                if (ASCII[c] == ESCAPE_STANDARD && "\b\t\n\f\r".indexOf(c) < 0) {
                    ASCII[c] = ESCAPE_CUSTOM;
                    LOWER[c] = new com.fasterxml.jackson.core.io.SerializedString(String.format("\\u%04x", c));
                }
            }
        }

        @Override
        public int[] getEscapeCodesForAscii() {
            return ASCII;
        }

        @Override
        public com.fasterxml.jackson.core.SerializableString getEscapeSequence(int ch) {
            return ch < 0x20 ? LOWER[ch] : null;
        }
    }

    /** Parses one line like JSON.parse(buffer.toString('utf8')); returns null when JSON.parse would throw. */
    static JsonNode parseLine(byte[] buf, int off, int len) {
        // fast path: parse the bytes directly when they start like an object (no BOM, no UTF-16/32 detection);
        // invalid UTF-8 makes Jackson throw, and then the replacement-decoding path below decides like JS does
        if (len >= 2 && buf[off] == '{' && buf[off + 1] != 0) {
            try {
                JsonNode n = MAPPER.readTree(buf, off, len);
                if (n != null && !n.isMissingNode()) {
                    return n;
                }
            } catch (Exception | StackOverflowError e) {
                // fall through
            }
        }
        String s = new String(buf, off, len, StandardCharsets.UTF_8);
        if (!s.isEmpty() && s.charAt(0) == '\uFEFF') {
            return null; // JSON.parse rejects a BOM
        }
        try {
            JsonNode n = MAPPER.readTree(s);
            return n == null || n.isMissingNode() ? null : n;
        } catch (Exception | StackOverflowError e) {
            return null;
        }
    }

    /** Number.isSafeInteger(v) for a JSON value. */
    static boolean isSafeInteger(JsonNode n) {
        if (n == null || !n.isNumber()) {
            return false;
        }
        if (n.isIntegralNumber()) {
            if (n.canConvertToLong()) {
                long v = n.longValue();
                return v >= -MAX_SAFE && v <= MAX_SAFE;
            }
            return false;
        }
        double d = n.doubleValue();
        return !Double.isNaN(d) && !Double.isInfinite(d) && d == Math.rint(d) && Math.abs(d) <= MAX_SAFE;
    }

    /** Long value of a node for which {@link #isSafeInteger} holds. */
    static long safeLong(JsonNode n) {
        return n.isIntegralNumber() ? n.longValue() : (long) n.doubleValue();
    }

    /** JavaScript {@code value === expected} for a number node. */
    static boolean numberEquals(JsonNode n, long expected) {
        if (n == null || !n.isNumber()) {
            return false;
        }
        if (n.isIntegralNumber()) {
            if (n.canConvertToLong()) {
                return n.longValue() == expected;
            }
            // JS would round a huge integer to a double; it can only equal expected if that double does
            return n.bigIntegerValue().doubleValue() == (double) expected && Math.abs(expected) > MAX_SAFE;
        }
        return n.doubleValue() == (double) expected;
    }

    static boolean isRecord(JsonNode n) {
        return n != null && n.isObject();
    }

    static boolean isNonEmptyString(JsonNode n) {
        return n != null && n.isTextual() && !n.textValue().isEmpty();
    }
}
