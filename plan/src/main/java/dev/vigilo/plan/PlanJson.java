package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.util.UUID;

/** Shared encoding and strict decoding helpers of the plan formats. Decoders throw {@link FormatException}. */
final class PlanJson {
    /** Plan files are read back strictly: a key given twice is damage, never "the last value wins". */
    private static final ObjectMapper READER = StrictJson.newMapper();

    private PlanJson() {}

    /** A plan file does not decode; the caller turns it into {@link DamagedException} naming the key. */
    static final class FormatException extends RuntimeException {
        FormatException(String message) {
            super(message);
        }
    }

    static byte[] encode(ObjectNode node) {
        byte[] json = ProfileJson.bytes(node);
        byte[] out = new byte[json.length + 1];
        System.arraycopy(json, 0, out, 0, json.length);
        out[json.length] = '\n';
        return out;
    }

    static JsonNode decode(byte[] bytes, String format, int version) {
        return decode(bytes, format, version, version);
    }

    /**
     * Decodes a plan file of {@code format} whose version is one of {@code oldest..newest} (read its {@code version}
     * to tell them apart); a newer version says to upgrade, an older or unknown one is unsupported.
     */
    static JsonNode decode(byte[] bytes, String format, int oldest, int newest) {
        JsonNode n;
        try {
            n = READER.readTree(bytes);
        } catch (IOException e) {
            throw new FormatException("not JSON: " + e.getMessage());
        }
        if (n == null || !n.isObject()) {
            throw new FormatException("not a JSON object");
        }
        String f = text(n, "format");
        if (!format.equals(f)) {
            throw new FormatException("format is \"" + f + "\", expected \"" + format + "\"");
        }
        long v = num(n, "version");
        if (v > newest) {
            throw new FormatException(
                    "version " + v + " is newer than this Vigilo reads (" + newest + "); upgrade Vigilo");
        }
        if (v < oldest) {
            throw new FormatException("unsupported version " + v);
        }
        return n;
    }

    static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || !v.isTextual()) {
            throw new FormatException("field \"" + field + "\" is missing or not a string");
        }
        return v.asText();
    }

    static long num(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || !v.isIntegralNumber()) {
            throw new FormatException("field \"" + field + "\" is missing or not an integer");
        }
        return v.asLong();
    }

    static JsonNode array(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || !v.isArray()) {
            throw new FormatException("field \"" + field + "\" is missing or not a list");
        }
        return v;
    }

    static UUID uuid(JsonNode n, String field) {
        try {
            return UUID.fromString(text(n, field));
        } catch (IllegalArgumentException e) {
            throw new FormatException("field \"" + field + "\" is not a UUID");
        }
    }

    static Sha256 sha(JsonNode n, String field) {
        try {
            return Sha256.parseHex(text(n, field));
        } catch (IllegalArgumentException e) {
            throw new FormatException("field \"" + field + "\" is not a SHA-256 hex digest");
        }
    }

    static void putRef(ObjectNode n, ObjectRef ref) {
        n.put("key", ref.key().value());
        n.put("length", ref.length());
        n.put("sha256", ref.sha256().toHex());
    }

    static ObjectRef ref(JsonNode n) {
        try {
            return new ObjectRef(ObjectKey.of(text(n, "key")), num(n, "length"), sha(n, "sha256"));
        } catch (IllegalArgumentException e) {
            throw new FormatException("invalid object reference: " + e.getMessage());
        }
    }

    static void expect(boolean ok, String what) {
        if (!ok) {
            throw new FormatException(what);
        }
    }
}
