package dev.vigilo.exec.record;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.ToIntFunction;

/**
 * Typed reads (and the object reference shape) of the fields of a persisted exec document ({@link ReceiptParser}, {@link RunSnapshotParser}): a field
 * that is missing or of another JSON type is a {@link DamagedException} naming it, never a default value (Jackson's
 * {@code path(...).asLong()} would read a missing count as 0). {@code in} names the enclosing object for messages
 * ("case 701", or empty at the top level).
 */
final class JsonFields {
    private JsonFields() {}

    /** The header field naming a document's format. */
    static final String FORMAT = "format";
    /** The header field carrying a document's version (an integer). */
    static final String VERSION = "version";

    /** A new document with its header: {@code format}, then {@code version}. */
    static ObjectNode document(String format, int version) {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put(FORMAT, format);
        n.put(VERSION, version);
        return n;
    }

    /**
     * Checks a document's header and returns its version: {@code format} must name {@code format}, {@code version}
     * must be the number of one of {@code versions} (a parser's version enum, oldest first). Any other version,
     * a newer Vigilo's or a non-integer, is damage naming the versions this build reads.
     */
    static <V> V header(JsonNode n, String format, V[] versions, ToIntFunction<V> number) {
        if (n == null || !n.isObject() || !format.equals(n.path(FORMAT).asText())) {
            throw new DamagedException("not a " + format + " document");
        }
        JsonNode v = n.get(VERSION);
        if (v != null && v.isInt()) {
            for (V x : versions) {
                if (number.applyAsInt(x) == v.asInt()) {
                    return x;
                }
            }
        }
        throw new DamagedException("version " + n.path(VERSION) + " is not one this build reads "
                + Arrays.stream(versions).map(x -> number.applyAsInt(x)).toList()
                + "; a newer Vigilo wrote it, or it is damaged");
    }

    static JsonNode field(JsonNode parent, String name, String in) {
        JsonNode v = parent.get(name);
        if (v == null || v.isMissingNode()) {
            throw new DamagedException(at(in) + "field \"" + name + "\" is missing");
        }
        return v;
    }

    static String text(JsonNode parent, String name, String in) {
        JsonNode v = field(parent, name, in);
        require(v.isTextual(), v, name, in, "a string");
        return v.asText();
    }

    static Optional<String> optionalText(JsonNode parent, String name, String in) {
        JsonNode v = field(parent, name, in);
        if (v.isNull()) {
            return Optional.empty();
        }
        require(v.isTextual(), v, name, in, "a string or null");
        return Optional.of(v.asText());
    }

    static long longValue(JsonNode parent, String name, String in) {
        JsonNode v = field(parent, name, in);
        require(v.isIntegralNumber() && v.canConvertToLong(), v, name, in, "an integer");
        return v.asLong();
    }

    static int intValue(JsonNode parent, String name, String in) {
        JsonNode v = field(parent, name, in);
        require(v.isIntegralNumber() && v.canConvertToInt(), v, name, in, "a 32-bit integer");
        return v.asInt();
    }

    static double doubleValue(JsonNode parent, String name, String in) {
        JsonNode v = field(parent, name, in);
        require(v.isNumber(), v, name, in, "a number");
        return v.asDouble();
    }

    static boolean bool(JsonNode parent, String name, String in) {
        JsonNode v = field(parent, name, in);
        require(v.isBoolean(), v, name, in, "true or false");
        return v.asBoolean();
    }

    static JsonNode array(JsonNode parent, String name, String in) {
        JsonNode v = field(parent, name, in);
        require(v.isArray(), v, name, in, "a list");
        return v;
    }

    static JsonNode object(JsonNode parent, String name, String in) {
        JsonNode v = field(parent, name, in);
        require(v.isObject(), v, name, in, "an object");
        return v;
    }

    /** The object, or empty when the field is null. */
    static Optional<JsonNode> optionalObject(JsonNode parent, String name, String in) {
        JsonNode v = field(parent, name, in);
        if (v.isNull()) {
            return Optional.empty();
        }
        require(v.isObject(), v, name, in, "an object or null");
        return Optional.of(v);
    }

    static List<String> strings(JsonNode parent, String name, String in) {
        List<String> out = new ArrayList<>();
        for (JsonNode x : array(parent, name, in)) {
            if (!x.isTextual()) {
                throw new DamagedException(at(in) + "field \"" + name + "\" holds " + x + ", not a string");
            }
            out.add(x.asText());
        }
        return out;
    }

    static UUID uuid(JsonNode parent, String name, String in) {
        return UUID.fromString(text(parent, name, in));
    }

    static Sha256 sha256(JsonNode parent, String name, String in) {
        return Sha256.parseHex(text(parent, name, in));
    }

    static final String KEY = "key";
    static final String LENGTH = "length";
    static final String SHA256 = "sha256";

    /** An object reference's three fields ({@code key}, {@code length}, {@code sha256}) in {@code o}. */
    static ObjectRef ref(JsonNode o, String in) {
        return new ObjectRef(ObjectKey.of(text(o, KEY, in)), longValue(o, LENGTH, in), sha256(o, SHA256, in));
    }

    /** Writes {@code ref} as the three fields {@link #ref} reads. */
    static void putRef(ObjectNode o, ObjectRef ref) {
        o.put(KEY, ref.key().value());
        o.put(LENGTH, ref.length());
        o.put(SHA256, ref.sha256().toHex());
    }

    private static void require(boolean ok, JsonNode v, String name, String in, String what) {
        if (!ok) {
            String shown = v.toString();
            throw new DamagedException(at(in) + "field \"" + name + "\" is "
                    + (shown.length() > 60 ? shown.substring(0, 60) + "..." : shown) + ", not " + what);
        }
    }

    private static String at(String in) {
        return in.isEmpty() ? "" : in + ": ";
    }
}
