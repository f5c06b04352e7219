package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.input.EndpointUrls;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Parses a {@code chat} step's keys and the pipeline's {@code prices} for {@link PipelineParser}; every problem is a
 * {@code FILE:LINE:COLUMN} error at the offending node.
 */
final class ChatParser {
    /** A chat step's own keys (besides name, kind, retries, timeout_seconds, concurrency). */
    static final Set<String> KEYS = Set.of(
            "url",
            "model",
            "api_key_env",
            "headers",
            "messages",
            "temperature",
            "top_p",
            "max_tokens",
            "stop",
            "seed",
            "n",
            "response_schema",
            "response_format",
            "fields",
            "output_field",
            "reasoning_field",
            "finish_reason_field",
            "usage_field",
            "rate_limit",
            "cache");

    private static final Set<String> ROLES = Set.of("system", "user", "assistant");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern HEADER_NAME = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]+");
    /** Headers set by the step itself: a pipeline may not override them. */
    private static final Set<String> RESERVED_HEADERS =
            Set.of("authorization", "content-type", "content-length", "host", "connection", "expect", "upgrade");

    private final PipelineParser p;

    ChatParser(PipelineParser parser) {
        this.p = parser;
    }

    /** {@code prices: {MODEL: {prompt_per_million: X, completion_per_million: Y}}}; null when absent. */
    Map<String, ChatSpec.Price> prices(JsonNode root) {
        JsonNode n = root.get("prices");
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isObject() || n.isEmpty()) {
            throw p.err("/prices", "'prices' must map model names to {prompt_per_million, completion_per_million}");
        }
        Map<String, ChatSpec.Price> out = new HashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String ptr = "/prices/" + escape(e.getKey());
            JsonNode price = e.getValue();
            if (!price.isObject()) {
                throw p.err(
                        ptr,
                        "the price of model '" + e.getKey()
                                + "' must be a mapping {prompt_per_million, completion_per_million}");
            }
            p.checkKeys(price, ptr, Set.of("prompt_per_million", "completion_per_million"));
            out.put(
                    e.getKey(),
                    new ChatSpec.Price(
                            decimal(price, ptr, "prompt_per_million"), decimal(price, ptr, "completion_per_million")));
        }
        return out;
    }

    private BigDecimal decimal(JsonNode n, String ptr, String key) {
        JsonNode v = n.get(key);
        if (v == null) {
            throw p.err(ptr, "missing required key '" + key + "'");
        }
        if (!v.isNumber() || v.asDouble() < 0 || !Double.isFinite(v.asDouble())) {
            throw p.err(ptr + "/" + key, "'" + key + "' must be a number >= 0 (a price per million tokens)");
        }
        // The number as written (0.15 stays 0.15, not the nearest double), so costs add up exactly.
        return v.isIntegralNumber() ? new BigDecimal(v.bigIntegerValue()) : new BigDecimal(v.asText());
    }

    /** The chat part of step {@code name} at {@code ptr}. */
    ChatSpec chat(JsonNode n, String ptr, String name) {
        String urlText = p.text(n, ptr, "url", true);
        URI url;
        try {
            url = new URI(urlText);
        } catch (URISyntaxException e) {
            throw p.err(ptr + "/url", "'url' is not a URL (" + e.getReason() + "); give the endpoint's http(s) URL");
        }
        // The one check of endpoint URLs (run profiles make it too); first, so a refused URL is never echoed.
        Optional<String> credentials = EndpointUrls.credentialsProblem(url);
        if (credentials.isPresent()) {
            throw p.err(ptr + "/url", credentials.get());
        }
        if (url.getScheme() == null
                || !(url.getScheme().equals("http") || url.getScheme().equals("https"))
                || url.getHost() == null) {
            throw p.err(
                    ptr + "/url",
                    "'url' must be an http:// or https:// URL, e.g. https://api.openai.com/v1/chat/completions");
        }
        String model = p.text(n, ptr, "model", true);
        String apiKeyEnv = p.text(n, ptr, "api_key_env", false);
        if (apiKeyEnv != null && !ENV_NAME.matcher(apiKeyEnv).matches()) {
            throw p.err(ptr + "/api_key_env", "'api_key_env' must name an environment variable (letters, digits, _)");
        }
        Map<String, String> headers = headers(n, ptr);
        List<ChatSpec.Message> messages = messages(n, ptr);
        ObjectNode params = Json.MAPPER.createObjectNode();
        number(n, ptr, "temperature", 0, 2, params);
        number(n, ptr, "top_p", 0, 1, params);
        if (n.has("max_tokens")) {
            params.put("max_tokens", p.integer(n, ptr, "max_tokens", 0, 1, 10_000_000));
        }
        if (n.has("seed")) {
            JsonNode seed = n.get("seed");
            if (!seed.isIntegralNumber() || !seed.canConvertToLong()) {
                throw p.err(ptr + "/seed", "'seed' must be an integer");
            }
            params.put("seed", seed.longValue());
        }
        int choices = p.integer(n, ptr, "n", 1, 1, 128);
        if (n.has("n")) {
            params.put("n", choices);
        }
        stop(n, ptr, params);
        JsonNode schema = n.get("response_schema");
        if (schema != null) {
            if (!schema.isObject()) {
                throw p.err(
                        ptr + "/response_schema",
                        "'response_schema' must be a JSON Schema object (a mapping), e.g. {type: object, properties:"
                                + " {...}}");
            }
            Optional<String> problem = ResponseSchema.problem(schema);
            if (problem.isPresent()) {
                throw p.err(
                        ptr + "/response_schema",
                        "'response_schema' is not a valid JSON Schema (draft 2020-12): " + problem.get()
                                + "; fix the schema");
            }
        }
        ChatSpec.ResponseFormat format = responseFormat(n, ptr, schema);
        Map<String, String> fieldMap = fieldMap(n, ptr, schema, choices);
        ChatSpec.Outputs outputs = new ChatSpec.Outputs(
                outputField(n, ptr, "output_field", name),
                outputField(n, ptr, "reasoning_field", name + "_reasoning"),
                outputField(n, ptr, "finish_reason_field", name + "_finish_reason"),
                outputField(n, ptr, "usage_field", name + "_usage"));
        ChatSpec.RateLimit limit = rateLimit(n, ptr);
        if (limit != null) {
            p.rateLimit(url.toString(), limit, ptr + "/rate_limit");
        }
        boolean cache = false;
        if (n.has("cache")) {
            if (!n.get("cache").isBoolean()) {
                throw p.err(ptr + "/cache", "'cache' must be true or false");
            }
            cache = n.get("cache").booleanValue();
        }
        ChatSpec.Price price = null;
        Map<String, ChatSpec.Price> prices = p.prices();
        if (prices != null) {
            price = prices.get(model);
            if (price == null) {
                throw p.err(
                        ptr + "/model",
                        "no price for model '" + model + "' in 'prices' (priced: " + new TreeMap<>(prices).keySet()
                                + "); add {prompt_per_million, completion_per_million} for it");
            }
        }
        return new ChatSpec(
                url,
                model,
                apiKeyEnv,
                apiKeyEnv == null ? null : p.position(ptr + "/api_key_env"),
                headers,
                messages,
                params,
                choices,
                schema,
                format,
                fieldMap,
                outputs,
                limit,
                cache,
                price);
    }

    private Map<String, String> headers(JsonNode n, String ptr) {
        JsonNode h = n.get("headers");
        if (h == null) {
            return Map.of();
        }
        if (!h.isObject()) {
            throw p.err(ptr + "/headers", "'headers' must be a mapping of header names to strings");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = h.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String hp = ptr + "/headers/" + escape(e.getKey());
            if (!HEADER_NAME.matcher(e.getKey()).matches()) {
                throw p.err(hp, "'" + e.getKey() + "' is not a valid header name");
            }
            if (RESERVED_HEADERS.contains(e.getKey().toLowerCase(Locale.ROOT))) {
                throw p.err(
                        hp,
                        "header '" + e.getKey() + "' is set by the step itself"
                                + (e.getKey().equalsIgnoreCase("authorization")
                                        ? "; name the key's variable in api_key_env instead"
                                        : "; remove it"));
            }
            if (!e.getValue().isTextual()) {
                throw p.err(hp, "header values must be strings");
            }
            out.put(e.getKey(), e.getValue().textValue());
        }
        return out;
    }

    private List<ChatSpec.Message> messages(JsonNode n, String ptr) {
        JsonNode m = n.get("messages");
        if (m == null) {
            throw p.err(ptr, "a chat step needs 'messages' (a list of {role, content})");
        }
        if (!m.isArray() || m.isEmpty()) {
            throw p.err(ptr + "/messages", "'messages' must be a non-empty list of {role, content}");
        }
        List<ChatSpec.Message> out = new ArrayList<>();
        for (int i = 0; i < m.size(); i++) {
            String mp = ptr + "/messages/" + i;
            JsonNode msg = m.get(i);
            if (!msg.isObject()) {
                throw p.err(mp, "a message must be a mapping {role, content}");
            }
            p.checkKeys(msg, mp, Set.of("role", "content"));
            String role = p.text(msg, mp, "role", true);
            if (!ROLES.contains(role)) {
                throw p.err(mp + "/role", "unknown role '" + role + "'; use system, user or assistant");
            }
            out.add(new ChatSpec.Message(role, p.text(msg, mp, "content", true)));
        }
        if (out.stream().noneMatch(x -> x.role().equals("user"))) {
            throw p.err(ptr + "/messages", "'messages' needs at least one user message");
        }
        return out;
    }

    private void number(JsonNode n, String ptr, String key, double min, double max, ObjectNode params) {
        JsonNode v = n.get(key);
        if (v == null) {
            return;
        }
        if (!v.isNumber() || v.asDouble() < min || v.asDouble() > max) {
            throw p.err(ptr + "/" + key, "'" + key + "' must be a number from " + fmt(min) + " to " + fmt(max));
        }
        params.set(key, v);
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }

    private void stop(JsonNode n, String ptr, ObjectNode params) {
        JsonNode v = n.get("stop");
        if (v == null) {
            return;
        }
        if (v.isTextual() && !v.textValue().isEmpty()) {
            params.put("stop", v.textValue());
            return;
        }
        if (v.isArray() && !v.isEmpty() && v.size() <= 4) {
            ArrayNode a = params.putArray("stop");
            for (JsonNode s : v) {
                if (!s.isTextual() || s.textValue().isEmpty()) {
                    throw p.err(ptr + "/stop", "'stop' must be a string or a list of 1-4 non-empty strings");
                }
                a.add(s.textValue());
            }
            return;
        }
        throw p.err(ptr + "/stop", "'stop' must be a string or a list of 1-4 non-empty strings");
    }

    private ChatSpec.ResponseFormat responseFormat(JsonNode n, String ptr, JsonNode schema) {
        String f = p.text(n, ptr, "response_format", false);
        if (f == null) {
            return schema == null ? ChatSpec.ResponseFormat.NONE : ChatSpec.ResponseFormat.JSON_SCHEMA;
        }
        if (schema == null) {
            throw p.err(ptr + "/response_format", "'response_format' needs a 'response_schema'");
        }
        return switch (f) {
            case "json_schema" -> ChatSpec.ResponseFormat.JSON_SCHEMA;
            case "json_object" -> ChatSpec.ResponseFormat.JSON_OBJECT;
            case "none" -> ChatSpec.ResponseFormat.NONE;
            default ->
                throw p.err(
                        ptr + "/response_format",
                        "unknown response_format '" + f + "'; use json_schema, json_object or none");
        };
    }

    private Map<String, String> fieldMap(JsonNode n, String ptr, JsonNode schema, int choices) {
        JsonNode f = n.get("fields");
        if (f == null) {
            return Map.of();
        }
        if (schema == null) {
            throw p.err(ptr + "/fields", "'fields' maps the answer's properties: it needs a 'response_schema'");
        }
        if (choices > 1) {
            throw p.err(ptr + "/fields", "'fields' needs a single answer (n: 1)");
        }
        if (!f.isObject() || f.isEmpty()) {
            throw p.err(ptr + "/fields", "'fields' must map answer properties to item fields, e.g. {answer: answer}");
        }
        JsonNode declared = schema.get("properties");
        Map<String, String> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = f.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String fp = ptr + "/fields/" + escape(e.getKey());
            if (declared != null && declared.isObject() && !declared.has(e.getKey())) {
                throw p.err(
                        fp,
                        "'" + e.getKey() + "' is not a property of the response_schema (properties: "
                                + new TreeMap<>(Json.MAPPER.convertValue(declared, Map.class)).keySet() + ")");
            }
            if (!e.getValue().isTextual() || e.getValue().textValue().isEmpty()) {
                throw p.err(fp, "the item field for '" + e.getKey() + "' must be a non-empty string");
            }
            out.put(e.getKey(), e.getValue().textValue());
        }
        return out;
    }

    /** An output field: the given name, the default when absent, null when set to {@code false} (not kept). */
    private String outputField(JsonNode n, String ptr, String key, String dflt) {
        JsonNode v = n.get(key);
        if (v == null) {
            return dflt;
        }
        if (v.isBoolean() && !v.booleanValue()) {
            return null;
        }
        if (!v.isTextual() || v.textValue().isEmpty()) {
            throw p.err(ptr + "/" + key, "'" + key + "' must be a field name, or false to drop this part");
        }
        return v.textValue();
    }

    private ChatSpec.RateLimit rateLimit(JsonNode n, String ptr) {
        JsonNode r = n.get("rate_limit");
        if (r == null) {
            return null;
        }
        String rp = ptr + "/rate_limit";
        if (!r.isObject() || r.isEmpty()) {
            throw p.err(rp, "'rate_limit' must be a mapping {requests_per_minute, tokens_per_minute}");
        }
        p.checkKeys(r, rp, Set.of("requests_per_minute", "tokens_per_minute"));
        return new ChatSpec.RateLimit(
                p.integer(r, rp, "requests_per_minute", 0, 1, 100_000_000),
                p.integer(r, rp, "tokens_per_minute", 0, 1, 2_000_000_000));
    }

    /** A key as a JSON Pointer segment. */
    static String escape(String key) {
        return key.replace("~", "~0").replace("/", "~1");
    }
}
