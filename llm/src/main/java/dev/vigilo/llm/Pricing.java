package dev.vigilo.llm;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Prices of models per million tokens, by model name exactly as endpoints report it in their answers, and the one
 * cost computation of Vigilo's runs. Costs are exact decimals: a price times a token count, moved six places, never a
 * double. A model without a price has no cost (never a silent 0): callers report its tokens and its cost as unknown.
 *
 * <p>The canonical form, as a run's frozen profile carries it ({@code pricing}, docs/formats/plan-profile.md): an
 * object by model name, each {@code {"input": "0.15", "output": "0.6"[, "cached_input": "0.075"]}} with decimal
 * strings. Immutable.
 */
public final class Pricing {
    /** No prices. */
    public static final Pricing NONE = new Pricing(Map.of());

    private final Map<String, Price> prices;

    private Pricing(Map<String, Price> prices) {
        this.prices = Collections.unmodifiableMap(new TreeMap<>(prices));
    }

    /**
     * One model's price, per million tokens.
     *
     * @param input       per million prompt tokens not served from the provider's prompt cache
     * @param output      per million completion tokens
     * @param cachedInput per million prompt tokens served from the prompt cache; the input price when not given
     */
    public record Price(BigDecimal input, BigDecimal output, BigDecimal cachedInput) {
        private static final int PER_MILLION = 6;

        public Price {
            Objects.requireNonNull(input, "input");
            Objects.requireNonNull(output, "output");
            Objects.requireNonNull(cachedInput, "cachedInput");
            if (input.signum() < 0 || output.signum() < 0 || cachedInput.signum() < 0) {
                throw new IllegalArgumentException("a price cannot be negative");
            }
        }

        /**
         * The cost of {@code inputTokens} prompt tokens (of which {@code cachedInputTokens} were cached) and
         * {@code outputTokens} completion tokens.
         */
        public BigDecimal cost(long inputTokens, long cachedInputTokens, long outputTokens) {
            if (cachedInputTokens < 0 || cachedInputTokens > inputTokens || outputTokens < 0) {
                throw new IllegalArgumentException("token counts must be >= 0, cached at most input");
            }
            BigDecimal fresh = input.multiply(BigDecimal.valueOf(inputTokens - cachedInputTokens));
            BigDecimal cached = cachedInput.multiply(BigDecimal.valueOf(cachedInputTokens));
            BigDecimal out = output.multiply(BigDecimal.valueOf(outputTokens));
            return plain(fresh.add(cached).add(out).movePointLeft(PER_MILLION));
        }
    }

    /** Prices by model name. */
    public static Pricing of(Map<String, Price> prices) {
        return prices.isEmpty() ? NONE : new Pricing(prices);
    }

    /**
     * Reads the canonical form; a missing or null node is {@link #NONE}.
     *
     * @throws IllegalArgumentException when the node is not that form (a frozen profile's is: this means damage)
     */
    public static Pricing fromJson(JsonNode node) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            return NONE;
        }
        if (!node.isObject()) {
            throw new IllegalArgumentException("pricing is not an object");
        }
        Map<String, Price> out = new TreeMap<>();
        node.properties().forEach(e -> {
            JsonNode p = e.getValue();
            BigDecimal input = decimal(p, "input", e.getKey());
            BigDecimal output = decimal(p, "output", e.getKey());
            BigDecimal cached = p.has("cached_input") ? decimal(p, "cached_input", e.getKey()) : input;
            out.put(e.getKey(), new Price(input, output, cached));
        });
        return of(out);
    }

    /** The canonical form's value of a price component: the plain decimal string. */
    public static String text(BigDecimal d) {
        return plain(d).toPlainString();
    }

    /** A decimal without trailing zeros, and 0 as 0. */
    public static BigDecimal plain(BigDecimal d) {
        return d.signum() == 0 ? BigDecimal.ZERO : d.stripTrailingZeros();
    }

    private static BigDecimal decimal(JsonNode p, String key, String model) {
        JsonNode v = p.get(key);
        if (v == null || !(v.isTextual() || v.isNumber())) {
            throw new IllegalArgumentException("pricing of model \"" + model + "\" has no " + key);
        }
        try {
            return new BigDecimal(v.asText());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("pricing of model \"" + model + "\": " + key + " is not a decimal");
        }
    }

    /** The price of {@code model}, if it has one. */
    public Optional<Price> price(String model) {
        return Optional.ofNullable(prices.get(model));
    }

    /** Every price, by model name in name order. */
    public Map<String, Price> prices() {
        return prices;
    }

    /** Whether there are no prices. */
    public boolean isEmpty() {
        return prices.isEmpty();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Pricing p && p.prices.equals(prices);
    }

    @Override
    public int hashCode() {
        return prices.hashCode();
    }

    @Override
    public String toString() {
        return "Pricing" + prices;
    }
}
