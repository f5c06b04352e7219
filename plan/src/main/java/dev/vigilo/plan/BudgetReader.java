package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import dev.vigilo.llm.Pricing;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads a profile's optional {@code budget} (docs/formats/plan-profile.md): {@code max_cost_usd} (an exact decimal
 * greater than 0) and/or {@code max_tokens} (1..10^15), the most a whole run may spend on model calls. Then checks
 * what a budget needs of the rest of the profile, each a located problem: a cost budget needs a price for every model
 * the run asks for (the http agent's and every judge's), and every model call needs a {@code max_tokens} (the http
 * agent's, every judge's), without which the completion of a call has no bound to reserve.
 */
final class BudgetReader {
    private static final KeyPath BUDGET = KeyPath.root().key("budget");
    /** Largest accepted {@code budget.max_tokens}. */
    static final long MAX_TOKENS = 1_000_000_000_000_000L;

    private final ConfigReader reader;

    BudgetReader(ConfigReader reader) {
        this.reader = reader;
    }

    Profile.Budget budget(JsonNode node) {
        if (node == null || reader.mapping(node, BUDGET).isEmpty()) {
            return Profile.Budget.NONE;
        }
        reader.allowKeys(node, BUDGET, List.of("max_cost_usd", "max_tokens"));
        Optional<BigDecimal> cost = reader.decimal(
                        node.get("max_cost_usd"), BUDGET.key("max_cost_usd"), false, BigDecimal.ZERO)
                .flatMap(d -> {
                    if (d.signum() == 0) {
                        reader.problem(BUDGET.key("max_cost_usd"), "must be greater than 0");
                        return Optional.empty();
                    }
                    return Optional.of(d);
                });
        Optional<Long> tokens = Optional.empty();
        JsonNode t = node.get("max_tokens");
        if (t != null) {
            long v = reader.longInteger(t, BUDGET.key("max_tokens"), 1, MAX_TOKENS, 0);
            tokens = v < 1 ? Optional.empty() : Optional.of(v);
        }
        if (node.get("max_cost_usd") == null && t == null) {
            reader.problem(BUDGET, "give max_cost_usd, max_tokens or both (e.g. {max_cost_usd: 25.00})");
        }
        return new Profile.Budget(cost, tokens);
    }

    /** The problems of a profile whose {@code budget} is {@code budget}: prices and {@code max_tokens}. */
    void check(Profile.Budget budget, Profile.Agent agent, List<Profile.Evaluator> evaluators, Pricing pricing) {
        if (!budget.present()) {
            return;
        }
        KeyPath top = KeyPath.root();
        List<Call> calls = new ArrayList<>();
        if (agent.kind() == Profile.AgentKind.HTTP) {
            calls.add(new Call(top.key("agent"), agent.parameters()));
        }
        for (int i = 0; i < evaluators.size(); i++) {
            Profile.Evaluator e = evaluators.get(i);
            KeyPath at = top.key("evaluators").index(i);
            if (e.kind() == Profile.EvaluatorKind.JUDGE) {
                calls.add(new Call(at, e.parameters()));
            } else if (e.kind() == Profile.EvaluatorKind.PANEL) {
                JsonNode judges = e.parameters().path("judges");
                for (int j = 0; j < judges.size(); j++) {
                    calls.add(new Call(at.key("judges").index(j), judges.get(j)));
                }
            }
        }
        for (Call c : calls) {
            JsonNode mt = c.parameters().get("max_tokens");
            if (mt == null || !mt.isIntegralNumber()) {
                reader.problem(
                        c.at().key("max_tokens"),
                        "is required with a budget: it bounds what a call may cost before it is made");
            }
            String model = c.parameters().path("model").asText("");
            if (budget.maxCostUsd().isPresent()
                    && !model.isEmpty()
                    && pricing.price(model).isEmpty()) {
                reader.problem(
                        c.at().key("model"),
                        "budget.max_cost_usd needs a price for the model \"" + model + "\"; add pricing." + model
                                + ": {input: ..., output: ...}");
            }
        }
    }

    private record Call(KeyPath at, JsonNode parameters) {}
}
