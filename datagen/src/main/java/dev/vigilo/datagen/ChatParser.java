package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.input.EndpointUrls;
import dev.vigilo.config.CompiledSchema;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Parses a {@code chat} step's keys and the pipeline's {@code prices} for {@link PipelineParser}, through its
 * first-problem {@link ConfigReader}: every problem is one {@code FILE:LINE:COLUMN: key.path: what} line at the
 * offending node.
 */
final class ChatParser {
    /** A chat step's own keys (besides name, kind, retries, timeout_seconds, concurrency), in the docs' order. */
    static final List<String> KEYS = List.of(
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
            "circuit_breaker",
            "cache");

    private static final Map<String, String> ROLES = choices("system", "user", "assistant");
    private static final Map<String, ChatSpec.ResponseFormat> FORMATS = formats();
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern HEADER_NAME = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]+");
    /** Headers set by the step itself: a pipeline may not override them. */
    private static final Set<String> RESERVED_HEADERS =
            Set.of("authorization", "content-type", "content-length", "host", "connection", "expect", "upgrade");

    private final PipelineParser p;
    private final ConfigReader reader;

    ChatParser(PipelineParser parser, ConfigReader reader) {
        this.p = parser;
        this.reader = reader;
    }

    /** {@code prices: {MODEL: {prompt_per_million: X, completion_per_million: Y}}} at {@code at}; null when absent. */
    Map<String, ChatSpec.Price> prices(JsonNode n, KeyPath at) {
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isObject() || n.isEmpty()) {
            throw reader.failure(at, "must map model names to {prompt_per_million, completion_per_million}");
        }
        Map<String, ChatSpec.Price> out = new HashMap<>();
        for (Map.Entry<String, JsonNode> e : n.properties()) {
            KeyPath model = at.key(e.getKey());
            JsonNode price = e.getValue();
            if (!price.isObject()) {
                throw reader.failure(
                        model,
                        "must be the model's price, a mapping {prompt_per_million, completion_per_million}, got "
                                + ConfigReader.typeOf(price));
            }
            reader.allowKeys(price, model, List.of("prompt_per_million", "completion_per_million"));
            out.put(
                    e.getKey(),
                    new ChatSpec.Price(
                            perMillion(price, model, "prompt_per_million"),
                            perMillion(price, model, "completion_per_million")));
        }
        return out;
    }

    /** A price per million tokens, exactly as written (0.15 stays 0.15), so costs add up exactly. */
    private BigDecimal perMillion(JsonNode price, KeyPath model, String key) {
        return reader.decimal(price.get(key), model.key(key), true, BigDecimal.ZERO)
                .orElseThrow();
    }

    /** The chat part of step {@code name} at {@code at}. */
    ChatSpec chat(JsonNode n, KeyPath at, String name) {
        URI url = url(n.get("url"), at.key("url"));
        String model = reader.text(n.get("model"), at.key("model"), true).orElseThrow();
        KeyPath keyEnvAt = at.key("api_key_env");
        String apiKeyEnv = reader.text(n.get("api_key_env"), keyEnvAt, false).orElse(null);
        if (apiKeyEnv != null && !ENV_NAME.matcher(apiKeyEnv).matches()) {
            throw reader.failure(
                    keyEnvAt,
                    "must name an environment variable (letters, digits, _); the key itself never goes in the"
                            + " pipeline");
        }
        Map<String, String> headers = headers(n.get("headers"), at.key("headers"));
        List<ChatSpec.Message> messages = messages(n.get("messages"), at.key("messages"));
        ObjectNode params = Json.MAPPER.createObjectNode();
        number(n, at, "temperature", 0, 2, params);
        number(n, at, "top_p", 0, 1, params);
        if (n.has("max_tokens")) {
            params.put("max_tokens", reader.integer(n.get("max_tokens"), at.key("max_tokens"), 1, 10_000_000, 0));
        } else if (p.budget() != null) {
            // The reservation of a call must bound its cost: its answer is bounded only by max_tokens.
            throw reader.failure(
                    at.key("max_tokens"),
                    "is required with budget (it bounds what each call may cost); add max_tokens to step \"" + name
                            + "\"");
        }
        if (n.has("seed")) {
            JsonNode seed = n.get("seed");
            if (!seed.isIntegralNumber() || !seed.canConvertToLong()) {
                throw reader.failure(at.key("seed"), "must be an integer (64-bit), got " + seed);
            }
            params.put("seed", seed.longValue());
        }
        int choices = reader.integer(n.get("n"), at.key("n"), 1, 128, 1);
        if (n.has("n")) {
            params.put("n", choices);
        }
        stop(n.get("stop"), at.key("stop"), params);
        JsonNode schema = responseSchema(n.get("response_schema"), at.key("response_schema"));
        ChatSpec.ResponseFormat format = responseFormat(n.get("response_format"), at.key("response_format"), schema);
        Map<String, String> fieldMap = fieldMap(n.get("fields"), at.key("fields"), schema, choices);
        ChatSpec.Outputs outputs = new ChatSpec.Outputs(
                outputField(n, at, "output_field", name),
                outputField(n, at, "reasoning_field", name + "_reasoning"),
                outputField(n, at, "finish_reason_field", name + "_finish_reason"),
                outputField(n, at, "usage_field", name + "_usage"));
        ChatSpec.RateLimit limit = rateLimit(n.get("rate_limit"), at.key("rate_limit"));
        if (limit != null) {
            p.rateLimit(url.toString(), limit, at.key("rate_limit"));
        }
        ChatSpec.CircuitBreaker breaker = circuitBreaker(n.get("circuit_breaker"), at.key("circuit_breaker"));
        boolean cache = reader.bool(n.get("cache"), at.key("cache"), false);
        ChatSpec.Price price = null;
        Map<String, ChatSpec.Price> prices = p.prices();
        if (prices != null) {
            price = prices.get(model);
            if (price == null) {
                throw reader.failure(
                        at.key("model"),
                        "no price for model \"" + model + "\" in prices (priced: "
                                + String.join(", ", new TreeMap<>(prices).keySet())
                                + "); add {prompt_per_million, completion_per_million} for it");
            }
        }
        return new ChatSpec(
                url,
                model,
                apiKeyEnv,
                apiKeyEnv == null ? null : p.position(keyEnvAt),
                headers,
                messages,
                params,
                choices,
                schema,
                format,
                fieldMap,
                outputs,
                limit,
                breaker,
                cache,
                price);
    }

    /** The endpoint: an http(s) URL with a host and no credentials; a refused URL is never echoed. */
    private URI url(JsonNode node, KeyPath at) {
        String text = reader.text(node, at, true).orElseThrow();
        URI url;
        try {
            url = new URI(text);
        } catch (URISyntaxException e) {
            throw reader.failure(at, "is not a URL (" + e.getReason() + "); give the endpoint's http(s) URL");
        }
        // The one check of endpoint URLs (run profiles make it too); first, so a refused URL is never echoed.
        Optional<String> credentials = EndpointUrls.credentialsProblem(url);
        if (credentials.isPresent()) {
            throw reader.failure(at, credentials.get());
        }
        if (url.getScheme() == null
                || !(url.getScheme().equals("http") || url.getScheme().equals("https"))
                || url.getHost() == null) {
            throw reader.failure(
                    at, "must be an http:// or https:// URL, e.g. https://api.openai.com/v1/chat/completions");
        }
        return url;
    }

    private Map<String, String> headers(JsonNode h, KeyPath at) {
        if (h == null) {
            return Map.of();
        }
        if (!h.isObject()) {
            throw reader.failure(at, "must be a mapping of header names to strings, got " + ConfigReader.typeOf(h));
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : h.properties()) {
            KeyPath header = at.key(e.getKey());
            if (!HEADER_NAME.matcher(e.getKey()).matches()) {
                throw reader.failure(header, "is not a valid header name");
            }
            if (RESERVED_HEADERS.contains(e.getKey().toLowerCase(Locale.ROOT))) {
                throw reader.failure(
                        header,
                        "is set by the step itself"
                                + (e.getKey().equalsIgnoreCase("authorization")
                                        ? "; name the key's variable in api_key_env instead"
                                        : "; remove it"));
            }
            // An empty value is a value (not reader.text, which refuses empty strings).
            if (!e.getValue().isTextual()) {
                throw reader.failure(
                        header, "must be a string (the header's value), got " + ConfigReader.typeOf(e.getValue()));
            }
            out.put(e.getKey(), e.getValue().textValue());
        }
        return out;
    }

    private List<ChatSpec.Message> messages(JsonNode m, KeyPath at) {
        if (m == null || m.isNull()) {
            throw reader.failure(at, "is required: a list of {role, content}");
        }
        if (!m.isArray() || m.isEmpty()) {
            throw reader.failure(
                    at,
                    "must be a non-empty list of {role, content}"
                            + (m.isArray() ? "" : ", got " + ConfigReader.typeOf(m)));
        }
        List<ChatSpec.Message> out = new ArrayList<>();
        for (int i = 0; i < m.size(); i++) {
            KeyPath message = at.index(i);
            JsonNode msg = m.get(i);
            if (!msg.isObject()) {
                throw reader.failure(message, "must be a mapping {role, content}, got " + ConfigReader.typeOf(msg));
            }
            reader.allowKeys(msg, message, List.of("role", "content"));
            String role = reader.oneOf(msg.get("role"), message.key("role"), true, "role", ROLES)
                    .orElseThrow();
            String content = reader.text(msg.get("content"), message.key("content"), true)
                    .orElseThrow();
            out.add(new ChatSpec.Message(role, content));
        }
        if (out.stream().noneMatch(x -> x.role().equals("user"))) {
            throw reader.failure(at, "needs at least one user message");
        }
        return out;
    }

    /** A model parameter in {@code [min, max]}, sent as given. */
    private void number(JsonNode n, KeyPath at, String key, double min, double max, ObjectNode params) {
        if (reader.number(n.get(key), at.key(key), min, max).isPresent()) {
            params.set(key, n.get(key));
        }
    }

    private void stop(JsonNode v, KeyPath at, ObjectNode params) {
        if (v == null) {
            return;
        }
        if (v.isTextual()) {
            params.put("stop", reader.text(v, at, true).orElseThrow());
            return;
        }
        if (!v.isArray() || v.isEmpty() || v.size() > 4) {
            throw reader.failure(at, "must be a string or a list of 1-4 non-empty strings");
        }
        ArrayNode a = params.putArray("stop");
        for (int i = 0; i < v.size(); i++) {
            a.add(reader.text(v.get(i), at.index(i), true).orElseThrow());
        }
    }

    /** The JSON Schema the answer must satisfy, or null for none. */
    private JsonNode responseSchema(JsonNode schema, KeyPath at) {
        if (schema == null) {
            return null;
        }
        if (!schema.isObject()) {
            throw reader.failure(
                    at,
                    "must be a JSON Schema object (a mapping), e.g. {type: object, properties: {...}}, got "
                            + ConfigReader.typeOf(schema));
        }
        Optional<String> problem = CompiledSchema.problem(schema);
        if (problem.isPresent()) {
            throw reader.failure(
                    at, "is not a valid JSON Schema (draft 2020-12): " + problem.get() + "; fix the schema");
        }
        return schema;
    }

    private ChatSpec.ResponseFormat responseFormat(JsonNode f, KeyPath at, JsonNode schema) {
        if (f == null) {
            return schema == null ? ChatSpec.ResponseFormat.NONE : ChatSpec.ResponseFormat.JSON_SCHEMA;
        }
        if (schema == null) {
            throw reader.failure(at, "needs a response_schema (the schema the format sends)");
        }
        return reader.oneOf(f, at, true, "response_format", FORMATS).orElseThrow();
    }

    private Map<String, String> fieldMap(JsonNode f, KeyPath at, JsonNode schema, int choices) {
        if (f == null) {
            return Map.of();
        }
        if (schema == null) {
            throw reader.failure(at, "maps the answer's properties: it needs a response_schema");
        }
        if (choices > 1) {
            throw reader.failure(at, "needs a single answer (n: 1)");
        }
        if (!f.isObject() || f.isEmpty()) {
            throw reader.failure(at, "must map answer properties to item fields, e.g. {answer: answer}");
        }
        JsonNode declared = schema.get("properties");
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : f.properties()) {
            KeyPath field = at.key(e.getKey());
            if (declared != null && declared.isObject() && !declared.has(e.getKey())) {
                List<String> properties = new ArrayList<>();
                declared.fieldNames().forEachRemaining(properties::add);
                properties.sort(null);
                throw reader.failure(
                        field,
                        "is not a property of the response_schema (properties: " + String.join(", ", properties) + ")");
            }
            out.put(e.getKey(), reader.text(e.getValue(), field, true).orElseThrow());
        }
        return out;
    }

    /** An output field: the given name, the default when absent, null when set to {@code false} (not kept). */
    private String outputField(JsonNode n, KeyPath at, String key, String dflt) {
        JsonNode v = n.get(key);
        if (v == null) {
            return dflt;
        }
        if (v.isBoolean() && !v.booleanValue()) {
            return null;
        }
        if (!v.isTextual() || v.textValue().isEmpty()) {
            throw reader.failure(at.key(key), "must be a field name, or false to drop this part");
        }
        return v.textValue();
    }

    private ChatSpec.RateLimit rateLimit(JsonNode r, KeyPath at) {
        if (r == null) {
            return null;
        }
        if (!r.isObject() || r.isEmpty()) {
            throw reader.failure(at, "must be a mapping {requests_per_minute, tokens_per_minute}");
        }
        reader.allowKeys(r, at, List.of("requests_per_minute", "tokens_per_minute"));
        return new ChatSpec.RateLimit(
                reader.integer(r.get("requests_per_minute"), at.key("requests_per_minute"), 1, 100_000_000, 0),
                reader.integer(r.get("tokens_per_minute"), at.key("tokens_per_minute"), 1, 2_000_000_000, 0));
    }

    private ChatSpec.CircuitBreaker circuitBreaker(JsonNode r, KeyPath at) {
        if (r == null) {
            return null;
        }
        if (!r.isObject()) {
            throw reader.failure(at, "must be a mapping {failures, cool_down_seconds}");
        }
        reader.allowKeys(r, at, List.of("failures", "cool_down_seconds"));
        return new ChatSpec.CircuitBreaker(
                reader.integer(
                        r.get("failures"),
                        at.key("failures"),
                        1,
                        1000,
                        dev.vigilo.fleet.LimiterState.Limits.DEFAULT_FAILURES),
                reader.integer(
                        r.get("cool_down_seconds"),
                        at.key("cool_down_seconds"),
                        1,
                        3600,
                        dev.vigilo.fleet.LimiterState.Limits.DEFAULT_COOL_DOWN_SECONDS));
    }

    private static Map<String, String> choices(String... names) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String name : names) {
            out.put(name, name);
        }
        return out;
    }

    private static Map<String, ChatSpec.ResponseFormat> formats() {
        Map<String, ChatSpec.ResponseFormat> out = new LinkedHashMap<>();
        out.put("json_schema", ChatSpec.ResponseFormat.JSON_SCHEMA);
        out.put("json_object", ChatSpec.ResponseFormat.JSON_OBJECT);
        out.put("none", ChatSpec.ResponseFormat.NONE);
        return out;
    }
}
