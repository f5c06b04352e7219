package dev.vigilo.llm;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A chat completions request body. {@link #toJson()} writes, in this order: {@code model}, {@code messages}, the
 * free-form {@code parameters} (a pipeline's model parameters, as given), then the typed values that are set:
 * {@code max_tokens}, {@code temperature}, {@code seed}, {@code tools}, {@code response_format} (a typed value
 * replaces a parameter of the same name).
 *
 * @param model          the model name
 * @param messages       the conversation, in order
 * @param parameters     further top-level members, copied as they are
 * @param maxTokens      {@code max_tokens}
 * @param temperature    {@code temperature}
 * @param seed           {@code seed}
 * @param tools          the functions offered ({@code tools}; none: not sent)
 * @param responseFormat {@code response_format}
 */
public record ChatRequest(
        String model,
        List<ChatMessage> messages,
        ObjectNode parameters,
        Optional<Integer> maxTokens,
        Optional<Double> temperature,
        Optional<Long> seed,
        List<ChatTool> tools,
        Optional<ResponseFormat> responseFormat) {
    public ChatRequest {
        Objects.requireNonNull(model, "model");
        messages = List.copyOf(messages);
        parameters = parameters.deepCopy();
        Objects.requireNonNull(maxTokens, "maxTokens");
        Objects.requireNonNull(temperature, "temperature");
        Objects.requireNonNull(seed, "seed");
        tools = List.copyOf(tools);
        Objects.requireNonNull(responseFormat, "responseFormat");
    }

    /** A request of {@code model} and {@code messages} alone. */
    public static ChatRequest of(String model, List<ChatMessage> messages) {
        return new ChatRequest(
                model,
                messages,
                JsonNodeFactory.instance.objectNode(),
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                List.of(),
                Optional.empty());
    }

    /** This request with {@code max_tokens} and {@code temperature} as given. */
    public ChatRequest withSampling(Optional<Integer> maxTokens, Optional<Double> temperature) {
        return new ChatRequest(model, messages, parameters, maxTokens, temperature, seed, tools, responseFormat);
    }

    /** This request with further top-level members. */
    public ChatRequest withParameters(ObjectNode parameters) {
        return new ChatRequest(model, messages, parameters, maxTokens, temperature, seed, tools, responseFormat);
    }

    /** This request with {@code response_format}. */
    public ChatRequest withResponseFormat(Optional<ResponseFormat> format) {
        return new ChatRequest(model, messages, parameters, maxTokens, temperature, seed, tools, format);
    }

    /** This request offering {@code tools}. */
    public ChatRequest withTools(List<ChatTool> tools) {
        return new ChatRequest(model, messages, parameters, maxTokens, temperature, seed, tools, responseFormat);
    }

    /** This request with {@code seed}. */
    public ChatRequest withSeed(Optional<Long> seed) {
        return new ChatRequest(model, messages, parameters, maxTokens, temperature, seed, tools, responseFormat);
    }

    /** The body as a fresh JSON object (the caller serializes it). */
    public ObjectNode toJson() {
        ObjectNode r = JsonNodeFactory.instance.objectNode();
        r.put("model", model);
        ArrayNode ms = r.putArray("messages");
        messages.forEach(m -> ms.add(m.toJson()));
        r.setAll(parameters.deepCopy());
        maxTokens.ifPresent(t -> r.put("max_tokens", t));
        temperature.ifPresent(t -> r.put("temperature", t));
        seed.ifPresent(s -> r.put("seed", s));
        if (!tools.isEmpty()) {
            ArrayNode ts = r.putArray("tools");
            tools.forEach(t -> ts.add(t.toJson()));
        }
        responseFormat.ifPresent(f -> r.set("response_format", f.toJson()));
        return r;
    }
}
