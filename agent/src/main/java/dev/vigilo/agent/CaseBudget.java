package dev.vigilo.agent;

import dev.vigilo.llm.Pricing;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * The per-case limits of one execution of a case (a profile's {@code limits.case_seconds}, {@code case_tokens} and
 * {@code case_cost_usd}, docs/formats/plan-profile.md): how long its agent call may take, all attempts together, and
 * how many tokens and how much money its model calls may use. The agent call stops when one is exceeded, with an
 * {@link AgentErrorType#LIMIT_EXCEEDED} error naming the limit and the figure; the worker checks the tokens and cost
 * again once the judges ran. Immutable.
 *
 * @param time   {@code case_seconds}: the agent call's wall time, first attempt's start to last attempt's end
 * @param tokens {@code case_tokens}: input plus output tokens of every call
 * @param cost   {@code case_cost_usd}, with the pricing of calls: the cost of some calls, empty when a model has no
 *               price (such calls cannot be held to the limit; their tokens still are to {@code case_tokens})
 */
public record CaseBudget(
        Optional<Duration> time,
        Optional<Long> tokens,
        Optional<BigDecimal> costUsd,
        Function<List<TokenUsage>, Optional<BigDecimal>> cost) {
    /** No limits. */
    public static final CaseBudget NONE =
            new CaseBudget(Optional.empty(), Optional.empty(), Optional.empty(), u -> Optional.empty());

    public CaseBudget {
        Objects.requireNonNull(time, "time");
        Objects.requireNonNull(tokens, "tokens");
        Objects.requireNonNull(costUsd, "costUsd");
        Objects.requireNonNull(cost, "cost");
    }

    /**
     * The limit the calls {@code used} exceed, as one line naming it and the figure ({@code limits.case_tokens:
     * the case used 1,234 tokens, over its limit of 1,000}); empty when within every limit.
     */
    public Optional<String> exceededBy(List<TokenUsage> used) {
        if (tokens.isPresent()) {
            long t = 0;
            for (TokenUsage u : used) {
                t += u.promptTokens() + u.completionTokens();
            }
            if (t > tokens.get()) {
                return Optional.of(String.format(
                        "limits.case_tokens: the case used %,d tokens, over its limit of %,d", t, tokens.get()));
            }
        }
        if (costUsd.isPresent() && !used.isEmpty()) {
            Optional<BigDecimal> c = cost.apply(used);
            if (c.isPresent() && c.get().compareTo(costUsd.get()) > 0) {
                return Optional.of("limits.case_cost_usd: the case cost $"
                        + Pricing.text(c.get()) + ", over its limit of $"
                        + Pricing.text(costUsd.get()));
            }
        }
        return Optional.empty();
    }

    /** The error of a call stopped by {@code case_seconds} after {@code elapsed}. */
    AgentError timeExceeded(Duration elapsed, int attempt) {
        return new AgentError(
                AgentErrorType.LIMIT_EXCEEDED,
                "limits.case_seconds: the case ran " + Texts.seconds(elapsed) + ", over its limit of "
                        + time.orElseThrow().toSeconds() + " s; attempt " + attempt + " was stopped",
                false);
    }
}
