package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a {@code chat} step sends and keeps (docs/datagen.md, "Chat steps").
 *
 * @param url the OpenAI-compatible chat completions endpoint
 * @param model the model name sent
 * @param apiKeyEnv the environment variable holding the API key (sent as a bearer token), or null for none
 * @param apiKeyEnvAt where {@code api_key_env} stands in the pipeline file (for the missing-variable error)
 * @param headers extra request headers, sent as given
 * @param messages the conversation, each content a {@code {{field}}} template
 * @param parameters the model parameters as given (temperature, top_p, max_tokens, stop, seed, n), merged into the
 *     request body
 * @param choices {@code n}: how many choices are asked for (1 when not given)
 * @param responseSchema the JSON Schema the answer must satisfy, or null for a free-text answer
 * @param responseFormat how the schema is sent to the endpoint
 * @param fieldMap with a schema: answer property -> item field
 * @param outputs which item fields receive the content, reasoning, finish reason and usage
 * @param rateLimit the endpoint's limits (shared by every step with this url), or null for none
 * @param circuitBreaker the endpoint's circuit breaker (fleet-wide, with a control database), or null: the default
 *     one when there is a {@code rate_limit}, none otherwise
 * @param cache whether identical requests are answered from earlier responses
 * @param price the model's price, or null when the pipeline gives no prices
 */
public record ChatSpec(
        URI url,
        String model,
        String apiKeyEnv,
        SourcePosition apiKeyEnvAt,
        Map<String, String> headers,
        List<Message> messages,
        ObjectNode parameters,
        int choices,
        JsonNode responseSchema,
        ResponseFormat responseFormat,
        Map<String, String> fieldMap,
        Outputs outputs,
        RateLimit rateLimit,
        CircuitBreaker circuitBreaker,
        boolean cache,
        Price price) {
    public ChatSpec {
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(model, "model");
        headers = Map.copyOf(headers);
        messages = List.copyOf(messages);
        parameters = parameters.deepCopy();
        fieldMap = Map.copyOf(fieldMap);
        Objects.requireNonNull(outputs, "outputs");
        Objects.requireNonNull(responseFormat, "responseFormat");
    }

    /** One message: a role (system, user, assistant) and its content template. */
    public record Message(String role, String content) {}

    /**
     * Item fields receiving the answer's parts; null = not kept.
     *
     * @param content the answer (the parsed object with a schema; a list of them when {@code n > 1})
     * @param reasoning the reasoning text, when the endpoint returns one
     * @param finishReason the finish reason
     * @param usage the token usage object ({@code prompt_tokens, completion_tokens, total_tokens})
     */
    public record Outputs(String content, String reasoning, String finishReason, String usage) {}

    /** How a response schema is sent: as {@code json_schema}, as {@code json_object}, or not at all. */
    public enum ResponseFormat {
        /** {@code "response_format": {"type": "json_schema", "json_schema": {"name", "schema"}}}. */
        JSON_SCHEMA,
        /** {@code "response_format": {"type": "json_object"}} (the schema is checked here only). */
        JSON_OBJECT,
        /** Nothing is sent (an endpoint without structured output); the schema is checked here only. */
        NONE
    }

    /**
     * Limits of one endpoint (url), shared by every concurrent item of the process; 0 = no limit.
     *
     * @param requestsPerMinute requests started per minute
     * @param tokensPerMinute prompt + completion tokens per minute (estimated before a request, corrected by the
     *     answer's usage)
     */
    public record RateLimit(int requestsPerMinute, int tokensPerMinute) {}

    /**
     * {@code circuit_breaker}: the fleet's circuit of the endpoint opens after {@code failures} connection failures or
     * 5xx answers in a row and lets one probe through after {@code coolDownSeconds} (docs/execution.md, "Circuit
     * breaker").
     */
    public record CircuitBreaker(int failures, int coolDownSeconds) {}

    /** Whether the step sends under a fleet limiter when the run has a control database. */
    public boolean fleetLimited() {
        return rateLimit != null || circuitBreaker != null;
    }

    /** A model's price per million prompt and completion tokens (exact decimals, any currency). */
    public record Price(BigDecimal promptPerMillion, BigDecimal completionPerMillion) {
        /** The exact cost of {@code prompt} and {@code completion} tokens. */
        public BigDecimal cost(long prompt, long completion) {
            return promptPerMillion
                    .multiply(BigDecimal.valueOf(prompt))
                    .add(completionPerMillion.multiply(BigDecimal.valueOf(completion)))
                    .movePointLeft(6)
                    .stripTrailingZeros();
        }
    }

    /**
     * A place in the pipeline file, for errors found after parsing.
     *
     * @param keyPath the node's key path, e.g. {@code steps[0].api_key_env}
     */
    public record SourcePosition(String file, int line, int column, String keyPath) {
        /** The one-line error in the pipeline's location style: {@code FILE:LINE:COLUMN: key.path: problem}. */
        public PipelineDefinitionException error(String problem) {
            return new PipelineDefinitionException(file, line, column, keyPath + ": " + problem);
        }
    }
}
