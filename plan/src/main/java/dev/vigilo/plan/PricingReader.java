package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import dev.vigilo.llm.Pricing;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads a profile's optional {@code pricing} (docs/formats/plan-profile.md): per model name, as endpoints report it,
 * {@code {input, output[, cached_input]}} in USD per million tokens, exact decimals >= 0.
 */
final class PricingReader {
    private static final KeyPath PRICING = KeyPath.root().key("pricing");
    /** The most models a profile prices. */
    static final int MAX_MODELS = 256;

    private final ConfigReader reader;

    PricingReader(ConfigReader reader) {
        this.reader = reader;
    }

    Pricing pricing(JsonNode node) {
        if (node == null || reader.mapping(node, PRICING).isEmpty()) {
            return Pricing.NONE;
        }
        if (node.size() > MAX_MODELS) {
            reader.problem(PRICING, "prices " + node.size() + " models; at most " + MAX_MODELS);
            return Pricing.NONE;
        }
        Map<String, Pricing.Price> prices = new LinkedHashMap<>();
        node.properties().forEach(e -> {
            KeyPath at = PRICING.key(e.getKey());
            if (e.getKey().isBlank() || e.getKey().length() > 256) {
                reader.problem(at, "a model name has 1..256 characters");
                return;
            }
            if (reader.mapping(e.getValue(), at).isEmpty()) {
                return;
            }
            JsonNode p = e.getValue();
            reader.allowKeys(p, at, List.of("input", "output", "cached_input"));
            Optional<BigDecimal> input = reader.decimal(p.get("input"), at.key("input"), true, BigDecimal.ZERO);
            Optional<BigDecimal> output = reader.decimal(p.get("output"), at.key("output"), true, BigDecimal.ZERO);
            Optional<BigDecimal> cached =
                    reader.decimal(p.get("cached_input"), at.key("cached_input"), false, BigDecimal.ZERO);
            if (input.isPresent() && output.isPresent()) {
                prices.put(e.getKey(), new Pricing.Price(input.get(), output.get(), cached.orElse(input.get())));
            }
        });
        return Pricing.of(prices);
    }
}
