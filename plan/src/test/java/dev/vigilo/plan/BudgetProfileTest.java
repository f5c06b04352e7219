package dev.vigilo.plan;

import static dev.vigilo.plan.PricingAndLimitsProfileTest.canonical;
import static dev.vigilo.plan.PricingAndLimitsProfileTest.parse;
import static dev.vigilo.plan.PricingAndLimitsProfileTest.problems;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A profile's {@code budget}: validated with locations (prices, max_tokens), frozen canonically, absent otherwise. */
class BudgetProfileTest {
    private static final String AGENT_WITH_MAX_TOKENS = "agent: {kind: http, url: \"http://127.0.0.1:9/v1/chat/"
            + "completions\", model: gpt-x, max_tokens: 100}\n";

    @Test
    void aBudgetIsFrozenCanonicallyAndAProfileWithoutOneKeepsItsBytes() {
        String plain = canonical("");
        assertThat(plain).doesNotContain("budget");
        Profile p = ProfileParser.parse(
                ("name: p\n" + AGENT_WITH_MAX_TOKENS + "evaluators: [{name: e, kind: exact_match}]\n"
                                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n"
                                + "pricing: {gpt-x: {input: 1, output: 2}}\n"
                                + "budget: {max_cost_usd: 25.00, max_tokens: 50000000}\n")
                        .getBytes(java.nio.charset.StandardCharsets.UTF_8),
                "p.yaml");
        assertThat(p.budget().maxCostUsd().orElseThrow()).isEqualByComparingTo("25");
        assertThat(p.budget().maxTokens()).contains(50_000_000L);
        assertThat(new String(ProfileJson.encode(p), java.nio.charset.StandardCharsets.UTF_8))
                .contains("\"budget\":{\"max_cost_usd\":\"25\",\"max_tokens\":50000000}");
        assertThat(parse("").budget().present()).isFalse();
    }

    @Test
    void aBudgetNeedsPricesForItsCostAndMaxTokensOnEveryCallLocated() {
        assertThat(problems("budget: {max_cost_usd: 10}\n"))
                .anySatisfy(x -> assertThat(x)
                        .startsWith("p.yaml:")
                        .contains("agent.model: budget.max_cost_usd needs a price for the model \"gpt-x\""))
                .anySatisfy(x -> assertThat(x).contains("agent.max_tokens: is required with a budget"));
        assertThat(problems("budget: {max_tokens: 1000}\n"))
                .singleElement()
                .asString()
                .contains("agent.max_tokens: is required with a budget");
        assertThat(problems("budget: {max_cost_usd: 0}\n"))
                .anySatisfy(x -> assertThat(x).contains("budget.max_cost_usd: must be greater than 0"));
        assertThat(problems("budget: {}\n"))
                .anySatisfy(x -> assertThat(x).contains("budget: give max_cost_usd, max_tokens or both"));
        assertThat(problems("budget: {max_usd: 3}\n"))
                .anySatisfy(x -> assertThat(x).contains("budget").contains("max_usd"));
        assertThat(problems("budget: {max_tokens: 0}\n"))
                .anySatisfy(x -> assertThat(x).contains("budget.max_tokens"));
    }
}
