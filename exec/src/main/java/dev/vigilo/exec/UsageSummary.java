package dev.vigilo.exec;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.llm.Pricing;
import java.math.BigDecimal;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The tokens and cost of a set of cases' model calls (a run's, or the cases one gate selects), in all and per role,
 * as {@code run status --json}, {@code /api} and the dashboard report them (docs/execution.md, "Usage and cost").
 * Immutable.
 *
 * @param all            every call
 * @param agent          the calls of the agent under evaluation
 * @param judges         the calls of judges
 * @param unpricedModels the models called that have no price in the run's {@code pricing}, in name order: while one
 *                       is called, the cost is unknown (never a silent 0)
 */
public record UsageSummary(Part all, Part agent, Part judges, List<String> unpricedModels) {
    /** Nothing called. */
    public static final UsageSummary NONE = new UsageSummary(Part.NONE, Part.NONE, Part.NONE, List.of());

    public UsageSummary {
        Objects.requireNonNull(all, "all");
        Objects.requireNonNull(agent, "agent");
        Objects.requireNonNull(judges, "judges");
        unpricedModels = List.copyOf(unpricedModels);
    }

    /**
     * Counts of calls.
     *
     * @param calls             calls whose answers reported usage
     * @param inputTokens       prompt tokens
     * @param cachedInputTokens of those, served from the provider's prompt cache
     * @param outputTokens      completion tokens
     * @param costUsd           their cost; empty while a model called has no price
     */
    public record Part(
            long calls, long inputTokens, long cachedInputTokens, long outputTokens, Optional<BigDecimal> costUsd) {
        /** No calls, no cost. */
        public static final Part NONE = new Part(0, 0, 0, 0, Optional.of(BigDecimal.ZERO));

        public Part {
            Objects.requireNonNull(costUsd, "costUsd");
        }

        /** Input plus output tokens. */
        public long tokens() {
            return inputTokens + outputTokens;
        }

        void putJson(ObjectNode o) {
            o.put("calls", calls)
                    .put("input_tokens", inputTokens)
                    .put("cached_input_tokens", cachedInputTokens)
                    .put("output_tokens", outputTokens)
                    .put("cost_usd", costUsd.map(UsageSummary::decimal).orElse(null));
        }
    }

    /** The cost as an exact decimal string ("0.0017458"). */
    public static String decimal(BigDecimal d) {
        return Pricing.text(d);
    }

    /**
     * Writes {@code {calls, input_tokens, cached_input_tokens, output_tokens, cost_usd, unpriced_models, agent: {...},
     * judges: {...}}} into {@code o} ({@code cost_usd} a decimal string, null while a model has no price).
     */
    public void putJson(ObjectNode o) {
        all.putJson(o);
        var unpriced = o.putArray("unpriced_models");
        unpricedModels.forEach(unpriced::add);
        agent.putJson(o.putObject("agent"));
        judges.putJson(o.putObject("judges"));
    }

    /** One line for people: "1,234 tokens (1,000 in, 234 out), $0.0017" or "... cost unknown: no price for m". */
    public String line() {
        String tokens = String.format(
                "%,d tokens (%,d in, %,d out) in %,d calls",
                all.tokens(), all.inputTokens(), all.outputTokens(), all.calls());
        String cost = all.costUsd()
                .map(c -> "$" + decimal(c))
                .orElse("cost unknown: no price for " + String.join(", ", unpricedModels));
        String judged = judges.calls() > 0
                ? "; judges " + String.format("%,d", judges.tokens()) + " tokens"
                        + judges.costUsd().map(c -> ", $" + decimal(c)).orElse("")
                : "";
        return tokens + ", " + cost + judged;
    }
}
