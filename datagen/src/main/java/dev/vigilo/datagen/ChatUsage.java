package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;

/**
 * What chat steps used, summed from the usage tags of their STEP_COMPLETED and FAILED events (every attempt counts,
 * also one whose answer was rejected). Cost is an exact decimal in the pipeline's price unit, null when no attempt
 * was priced.
 *
 * @param requests HTTP requests sent
 * @param retries requests that repeated an earlier one of the same step (after a 429, a 5xx, a broken connection
 *     or a failed attempt)
 * @param cachedAnswers attempts answered from the response cache (no request, no tokens)
 * @param promptTokens prompt tokens the endpoint reported
 * @param completionTokens completion tokens the endpoint reported
 * @param cost prompt and completion tokens at the pipeline's prices
 */
public record ChatUsage(
        long requests, long retries, long cachedAnswers, long promptTokens, long completionTokens, BigDecimal cost) {
    /** Nothing used. */
    public static final ChatUsage NONE = new ChatUsage(0, 0, 0, 0, 0, null);

    /** The sum of both. */
    public ChatUsage plus(ChatUsage o) {
        BigDecimal c = cost == null ? o.cost : o.cost == null ? cost : cost.add(o.cost);
        return new ChatUsage(
                requests + o.requests,
                retries + o.retries,
                cachedAnswers + o.cachedAnswers,
                promptTokens + o.promptTokens,
                completionTokens + o.completionTokens,
                c);
    }

    /** The usage one event's tags record; {@link #NONE} for tags without a {@code chat} object. */
    static ChatUsage ofTags(JsonNode tags) {
        JsonNode c = tags == null ? null : tags.get("chat");
        if (c == null || !c.isObject()) {
            return NONE;
        }
        return new ChatUsage(
                c.path("requests").asLong(0),
                c.path("retries").asLong(0),
                c.path("cached").asBoolean(false) ? 1 : 0,
                c.path("prompt_tokens").asLong(0),
                c.path("completion_tokens").asLong(0),
                c.path("cost").isTextual() ? new BigDecimal(c.get("cost").textValue()) : null);
    }

    /** {@code {requests, retries, cached, prompt_tokens, completion_tokens, cost}} (cost a decimal string or null). */
    ObjectNode toJson() {
        ObjectNode o = Json.MAPPER
                .createObjectNode()
                .put("requests", requests)
                .put("retries", retries)
                .put("cached", cachedAnswers)
                .put("prompt_tokens", promptTokens)
                .put("completion_tokens", completionTokens);
        if (cost == null) {
            o.putNull("cost");
        } else {
            o.put("cost", cost.signum() == 0 ? "0" : cost.stripTrailingZeros().toPlainString());
        }
        return o;
    }
}
