package dev.vigilo.datagen;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.config.CompiledSchema;
import dev.vigilo.llm.ChatAnswer;
import dev.vigilo.llm.ChatChoice;
import dev.vigilo.llm.ChatMessage;
import dev.vigilo.llm.ChatRequest;
import dev.vigilo.llm.ResponseFormat;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One attempt of a {@code chat} step: renders the messages, builds the request (model parameters, response_format),
 * answers it from the {@link ResponseCache} or through the {@link ChatClient}, checks the answer (content present;
 * with a response schema: JSON that satisfies it) and turns it into field updates plus usage tags. A rejected answer
 * is a retryable {@link StepFailure} ({@code InvalidStructuredOutput}: not JSON; {@code SchemaViolation}: the
 * validator's message) whose tags still count the tokens it used. Thread-safe.
 *
 * <p>Usage tags ({@code {"chat": {...}}} on the STEP_COMPLETED or FAILED event): {@code model, requests, retries,
 * prompt_tokens, completion_tokens, cost} (a decimal string; absent without prices), {@code cached}, {@code
 * request_hash}, and with {@code cache: true} the normalized {@code answer} the cache serves again.
 */
final class ChatStep {
    /** Tokens assumed for the answer when max_tokens is not given (for a tokens-per-minute limit). */
    static final int DEFAULT_ANSWER_TOKENS = 256;

    private final ChatClient client;
    private final ResponseCache cache;
    private final Map<String, String> apiKeys;
    private final SecretValues secrets;
    private final Map<StepSpec, CompiledSchema> schemas = new ConcurrentHashMap<>();

    /**
     * {@code apiKeys}: environment variable name -> value, for every api_key_env of the pipeline. Every one of those
     * values is masked in every answer and failure before anything looks at it (an endpoint may echo the request's
     * headers), so no field, tag, cached answer or message holds one.
     */
    ChatStep(ChatClient client, ResponseCache cache, Map<String, String> apiKeys) {
        this.client = client;
        this.cache = cache;
        this.apiKeys = Map.copyOf(apiKeys);
        this.secrets = SecretValues.of(apiKeys.values());
    }

    StepResult run(StepSpec step, ObjectNode fields, int attempt) throws StepFailure, InterruptedException {
        ChatSpec chat = step.chat();
        ObjectNode body = request(chat, step.name(), fields);
        String hash = requestHash(chat, body);
        Optional<ObjectNode> cached = chat.cache() ? cache.claim(hash) : Optional.empty();
        if (cached.isPresent()) {
            return result(step, cached.get(), 0, attempt, true, hash);
        }
        ObjectNode answer = null;
        try {
            String key = chat.apiKeyEnv() == null ? null : apiKeys.get(chat.apiKeyEnv());
            ChatClient.Answer a;
            try {
                a = client.send(
                        chat,
                        Json.canonical(body).getBytes(StandardCharsets.UTF_8),
                        key,
                        secrets,
                        estimate(chat, body),
                        step.timeout());
            } catch (StepFailure f) {
                // The requests it sent count, though nothing was answered.
                throw f.tags != null ? f : f.withTags(tags(chat, null, f.requests, attempt, false, hash, null));
            }
            JsonNode answerBody = secrets.mask(a.body());
            ObjectNode normalized;
            try {
                normalized = normalize(answerBody);
            } catch (StepFailure f) {
                throw f.withTags(tags(chat, answerBody.path("usage"), a.requests(), attempt, false, hash, null));
            }
            StepResult r = result(step, normalized, a.requests(), attempt, false, hash);
            answer = normalized;
            return r;
        } finally {
            if (chat.cache()) {
                cache.complete(hash, answer);
            }
        }
    }

    /** The request body: model, rendered messages, the step's parameters, response_format. */
    static ObjectNode request(ChatSpec chat, String stepName, ObjectNode fields) {
        List<ChatMessage> messages = new ArrayList<>();
        for (ChatSpec.Message m : chat.messages()) {
            messages.add(ChatMessage.of(m.role(), StepExecutor.render(m.content(), fields)));
        }
        Optional<ResponseFormat> format = switch (chat.responseFormat()) {
            case JSON_SCHEMA -> Optional.of(ResponseFormat.jsonSchema(schemaName(stepName), chat.responseSchema()));
            case JSON_OBJECT -> Optional.of(ResponseFormat.jsonObject());
            case NONE -> Optional.empty();
        };
        return ChatRequest.of(chat.model(), messages)
                .withParameters(chat.parameters())
                .withResponseFormat(format)
                .toJson();
    }

    /** OpenAI's schema names: {@code [A-Za-z0-9_-]{1,64}}. */
    private static String schemaName(String step) {
        String s = step.replaceAll("[^A-Za-z0-9_-]", "_");
        return s.length() > 64 ? s.substring(0, 64) : s;
    }

    /**
     * {@code sha256:<hex>} of the canonical JSON (sorted keys) of url, headers (names in lower case; the
     * Authorization header is never part of a request's identity) and body, plus the response schema even when it
     * is not sent, so a changed schema never reuses an answer checked against another one.
     */
    static String requestHash(ChatSpec chat, ObjectNode body) {
        ObjectNode id = Json.MAPPER.createObjectNode().put("url", chat.url().toString());
        ObjectNode h = id.putObject("headers");
        new TreeMap<>(chat.headers()).forEach((k, v) -> h.put(k.toLowerCase(Locale.ROOT), v));
        id.set("body", body);
        if (chat.responseSchema() != null) {
            id.set("response_schema", chat.responseSchema());
        }
        try {
            byte[] d = MessageDigest.getInstance("SHA-256")
                    .digest(Json.canonical(id).getBytes(StandardCharsets.UTF_8));
            return "sha256:" + HexFormat.of().formatHex(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Prompt characters / 4 plus the answer's token budget, for each choice. */
    private static long estimate(ChatSpec chat, ObjectNode body) {
        long chars = 0;
        for (JsonNode m : body.path("messages")) {
            chars += m.path("content").asText().length() + 16;
        }
        long answer = chat.parameters().path("max_tokens").asLong(DEFAULT_ANSWER_TOKENS);
        return chars / 4 + answer * chat.choices();
    }

    /**
     * The parts of an answer that are kept: {@code {"choices": [{"content", "reasoning", "finish_reason"}],
     * "usage"}}; InvalidHttpResponse when there is no choice with text content.
     */
    static ObjectNode normalize(JsonNode body) throws StepFailure {
        ChatAnswer answer = ChatAnswer.parse(body);
        if (answer.choices().isEmpty()) {
            throw new StepFailure("InvalidHttpResponse", "the answer has no choices: " + brief(body), null);
        }
        ObjectNode out = Json.MAPPER.createObjectNode();
        ArrayNode cs = out.putArray("choices");
        for (ChatChoice c : answer.choices()) {
            if (c.contentKind() != ChatChoice.ContentKind.TEXT && c.contentKind() != ChatChoice.ContentKind.PARTS) {
                throw new StepFailure(
                        "InvalidHttpResponse", "choice " + c.index() + " has no text content: " + brief(body), null);
            }
            ObjectNode o = cs.addObject().put("content", c.text().orElseThrow());
            c.reasoning().ifPresent(r -> o.put("reasoning", r));
            c.finishReason().ifPresent(f -> o.put("finish_reason", f));
        }
        answer.usage()
                .ifPresent(u -> out.putObject("usage")
                        .put("prompt_tokens", u.promptTokens())
                        .put("completion_tokens", u.completionTokens())
                        .put("total_tokens", u.totalTokens()));
        return out;
    }

    private static String brief(JsonNode body) {
        String s = Json.canonical(body);
        return s.length() <= 500 ? s : s.substring(0, 500) + "...";
    }

    /** Field updates from a normalized answer; schema checks throw (with usage tags) so the attempt is retried. */
    private StepResult result(StepSpec step, ObjectNode answer, int requests, int attempt, boolean cached, String hash)
            throws StepFailure {
        ChatSpec chat = step.chat();
        JsonNode usage = answer.path("usage");
        ObjectNode tags =
                tags(chat, cached ? null : usage, requests, attempt, cached, hash, chat.cache() ? answer : null);
        ArrayNode choices = (ArrayNode) answer.get("choices");
        ArrayNode contents = Json.MAPPER.createArrayNode();
        ArrayNode reasons = Json.MAPPER.createArrayNode();
        ArrayNode reasonings = Json.MAPPER.createArrayNode();
        boolean anyReasoning = false;
        for (int i = 0; i < choices.size(); i++) {
            JsonNode c = choices.get(i);
            String text = c.path("content").asText();
            if (chat.responseSchema() != null) {
                JsonNode parsed;
                try {
                    parsed = Json.parse(text);
                } catch (JsonProcessingException e) {
                    throw new StepFailure(
                                    "InvalidStructuredOutput",
                                    "answer" + (choices.size() > 1 ? " " + i : "") + " is not JSON ("
                                            + e.getOriginalMessage() + "): " + clip(text),
                                    null)
                            .withRequests(requests)
                            .withTags(tags);
                }
                Optional<String> violations = schema(step).violations(parsed);
                if (violations.isPresent()) {
                    throw new StepFailure(
                                    "SchemaViolation",
                                    "answer" + (choices.size() > 1 ? " " + i : "") + " does not match response_schema: "
                                            + violations.get() + "; answer: " + clip(text),
                                    null)
                            .withRequests(requests)
                            .withTags(tags);
                }
                contents.add(parsed);
            } else {
                contents.add(text);
            }
            reasons.add(c.path("finish_reason"));
            if (c.has("reasoning")) {
                anyReasoning = true;
            }
            reasonings.add(c.path("reasoning"));
        }
        boolean many = chat.choices() > 1;
        ObjectNode updates = Json.MAPPER.createObjectNode();
        ChatSpec.Outputs out = chat.outputs();
        if (out.content() != null) {
            updates.set(out.content(), many ? contents : contents.get(0));
        }
        if (out.reasoning() != null && anyReasoning) {
            updates.set(out.reasoning(), many ? reasonings : reasonings.get(0));
        }
        if (out.finishReason() != null) {
            updates.set(out.finishReason(), many ? reasons : reasons.get(0));
        }
        if (out.usage() != null && usage.isObject()) {
            updates.set(out.usage(), usage);
        }
        if (!chat.fieldMap().isEmpty()) {
            JsonNode parsed = contents.get(0);
            chat.fieldMap().forEach((prop, field) -> {
                JsonNode v = parsed.get(prop);
                if (v != null) {
                    updates.set(field, v);
                }
            });
        }
        return new StepResult(updates, tags);
    }

    private CompiledSchema schema(StepSpec step) {
        return schemas.computeIfAbsent(
                step, s -> CompiledSchema.compile(s.chat().responseSchema()));
    }

    private static String clip(String s) {
        return s.length() <= 1000 ? s : s.substring(0, 1000) + "...";
    }

    /** The attempt's usage tags; {@code usage} null or missing counts no tokens (a cached answer costs nothing). */
    static ObjectNode tags(
            ChatSpec chat, JsonNode usage, int requests, int attempt, boolean cached, String hash, ObjectNode answer) {
        long p = usage == null ? 0 : Math.max(0, usage.path("prompt_tokens").asLong(0));
        long c = usage == null ? 0 : Math.max(0, usage.path("completion_tokens").asLong(0));
        ObjectNode t = Json.MAPPER.createObjectNode();
        ObjectNode u = t.putObject("chat")
                .put("model", chat.model())
                .put("requests", requests)
                // Requests that repeated an earlier one of this step: re-sends, and the first request of a later
                // attempt.
                .put("retries", Math.max(0, requests - 1) + (attempt > 1 && requests > 0 ? 1 : 0))
                .put("prompt_tokens", p)
                .put("completion_tokens", c)
                .put("cached", cached)
                .put("request_hash", hash);
        if (chat.price() != null) {
            BigDecimal cost = chat.price().cost(p, c);
            u.put("cost", cost.signum() == 0 ? "0" : cost.toPlainString());
        }
        if (answer != null) {
            u.set("answer", answer);
        }
        return t;
    }
}
