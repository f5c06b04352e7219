package dev.vigilo.datagen;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.checkpoint.FieldState;
import dev.vigilo.checkpoint.FieldValue;
import dev.vigilo.common.errors.DamagedException;
import java.util.Map;

/** JSON helpers: canonical text (sorted keys, no whitespace) and FieldValue <-> JSON mapping. */
final class Json {
    private Json() {}

    static final ObjectMapper MAPPER = new ObjectMapper().configure(JsonNodeFeature.WRITE_PROPERTIES_SORTED, true);

    static String canonical(JsonNode n) {
        try {
            return MAPPER.writeValueAsString(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static JsonNode parse(String s) throws JsonProcessingException {
        return MAPPER.readTree(s);
    }

    /**
     * Integers -> int, other numbers -> float, booleans -> bool, strings -> str, anything else ->
     * canonical json.
     */
    static FieldValue toValue(JsonNode n) {
        if (n.isIntegralNumber() && n.canConvertToLong()) {
            return new FieldValue.IntValue(n.longValue());
        }
        if (n.isNumber()) {
            return new FieldValue.FloatValue(n.doubleValue());
        }
        if (n.isBoolean()) {
            return new FieldValue.BoolValue(n.booleanValue());
        }
        if (n.isTextual()) {
            return new FieldValue.StrValue(n.textValue());
        }
        return new FieldValue.JsonValue(canonical(n));
    }

    static JsonNode fromValue(FieldValue v) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        if (v instanceof FieldValue.IntValue x) {
            return f.numberNode(x.value());
        }
        if (v instanceof FieldValue.FloatValue x) {
            return f.numberNode(x.value());
        }
        if (v instanceof FieldValue.BoolValue x) {
            return f.booleanNode(x.value());
        }
        if (v instanceof FieldValue.StrValue x) {
            return f.textNode(x.value());
        }
        if (v instanceof FieldValue.JsonValue x) {
            try {
                return parse(x.json());
            } catch (JsonProcessingException e) {
                throw new DamagedException("stored JSON value is corrupt: " + e.getOriginalMessage(), e);
            }
        }
        if (v instanceof FieldValue.BlobRef x) {
            return f.objectNode()
                    .put("blob_event_id", x.eventId().value())
                    .put("size", x.size())
                    .put("checksum", x.sha256());
        }
        throw new IllegalArgumentException("unexpected value " + v);
    }

    /** An item's folded fields as a JSON object (appended fields become arrays). */
    static ObjectNode fields(Map<String, FieldState> fields) {
        ObjectNode o = MAPPER.createObjectNode();
        fields.forEach((k, st) -> {
            if (st.appended()) {
                var arr = o.putArray(k);
                st.values().forEach(v -> arr.add(fromValue(v)));
            } else {
                o.set(k, fromValue(st.last()));
            }
        });
        return o;
    }
}
