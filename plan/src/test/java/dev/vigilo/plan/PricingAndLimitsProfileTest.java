package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code pricing} and the per-case {@code limits} in a profile: validated with locations, written canonically. */
class PricingAndLimitsProfileTest {
    static final String BASE = "name: p\nagent: {kind: http, url: \"http://127.0.0.1:9/v1/chat/completions\","
            + " model: gpt-x}\nevaluators: [{name: e, kind: exact_match}]\n"
            + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";

    static Profile parse(String more) {
        return ProfileParser.parse((BASE + more).getBytes(StandardCharsets.UTF_8), "p.yaml");
    }

    static String canonical(String more) {
        return new String(ProfileJson.encode(parse(more)), StandardCharsets.UTF_8);
    }

    static List<String> problems(String more) {
        try {
            parse(more);
        } catch (ProfileException e) {
            return e.problems();
        }
        throw new AssertionError("the profile was accepted");
    }

    @Test
    void pricesAreExactAndCanonicalSoSpellingDoesNotChangeTheIdentity() {
        Profile p = parse("pricing:\n  z-model: {input: 0.150, output: 0.6, cached_input: 0.075}\n"
                + "  gpt-x: {input: 2.5, output: 10}\n");
        assertThat(p.pricing().price("z-model").orElseThrow().input()).isEqualByComparingTo("0.15");
        assertThat(p.pricing().price("gpt-x").orElseThrow().cachedInput())
                .as("cached_input defaults to input")
                .isEqualByComparingTo("2.5");
        assertThat(canonical("pricing:\n  z-model: {input: 0.150, output: 0.6, cached_input: 0.075}\n"
                        + "  gpt-x: {input: 2.5, output: 10}\n"))
                .endsWith("\"pricing\":{\"gpt-x\":{\"input\":\"2.5\",\"output\":\"10\"},"
                        + "\"z-model\":{\"input\":\"0.15\",\"output\":\"0.6\",\"cached_input\":\"0.075\"}}}");
        assertThat(ProfileJson.sha256(parse("pricing: {gpt-x: {input: 2.50, output: 10.0, cached_input: 2.5}}\n")))
                .isEqualTo(ProfileJson.sha256(parse("pricing: {gpt-x: {output: 10, input: 2.5}}\n")));
    }

    @Test
    void aProfileWithoutPricingOrCaseLimitsKeepsItsCanonicalBytes() {
        String plain = canonical("");
        assertThat(plain)
                .doesNotContain("pricing")
                .doesNotContain("case_seconds")
                .doesNotContain("case_tokens")
                .doesNotContain("case_cost_usd");
        assertThat(plain).contains("\"limits\":{\"max_cases\":10000000}");
        assertThat(canonical("limits: {max_cases: 10000000}\n")).isEqualTo(plain);
    }

    @Test
    void caseLimitsAreReadAndWritten() {
        Profile p = parse("limits: {case_seconds: 600, case_tokens: 200000, case_cost_usd: 0.50}\n"
                + "pricing: {gpt-x: {input: 1, output: 2}}\n");
        assertThat(p.limits().caseSeconds()).contains(600L);
        assertThat(p.limits().caseTokens()).contains(200_000L);
        assertThat(p.limits().caseCostUsd().orElseThrow()).isEqualByComparingTo(new BigDecimal("0.50"));
        assertThat(canonical("limits: {case_seconds: 600, case_tokens: 200000, case_cost_usd: 0.50}\n"
                        + "pricing: {gpt-x: {input: 1, output: 2}}\n"))
                .contains("\"limits\":{\"max_cases\":10000000,\"case_seconds\":600,\"case_tokens\":200000,"
                        + "\"case_cost_usd\":\"0.5\"}");
        assertThat(Duration.ofSeconds(p.limits().caseSeconds().orElseThrow())).isEqualTo(Duration.ofMinutes(10));
        assertThat(parse("").limits().caseSeconds()).isEqualTo(Optional.empty());
    }

    @Test
    void aCostEvaluatorIsExactAndNeedsTheAgentModelsPrice() {
        String cost = "name: p\nagent: {kind: http, url: \"http://127.0.0.1:9/v1/chat/completions\", model: gpt-x}\n"
                + "evaluators: [{name: e, kind: exact_match}, {name: c, kind: cost, max_usd: 0.010}]\n"
                + "gates: [{name: g, required_evaluators: [e, c], min_pass_rate: 1}]\n";
        Profile p = ProfileParser.parse(
                (cost + "pricing: {gpt-x: {input: 1, output: 2}}\n").getBytes(StandardCharsets.UTF_8), "p.yaml");
        assertThat(new String(ProfileJson.encode(p), StandardCharsets.UTF_8))
                .contains("{\"name\":\"c\",\"kind\":\"cost\",\"max_usd\":\"0.01\"}");
        try {
            ProfileParser.parse(cost.getBytes(StandardCharsets.UTF_8), "p.yaml");
            throw new AssertionError("accepted");
        } catch (ProfileException e) {
            assertThat(e.problems())
                    .singleElement()
                    .asString()
                    .contains("evaluators[1].max_usd: a cost evaluator needs a price for the agent's model \"gpt-x\"");
        }
    }

    @Test
    void badPricesAndLimitsAreLocatedProblems() {
        assertThat(problems("pricing: {gpt-x: {input: -1, output: 2}}\n"))
                .containsExactly("p.yaml:5:26: pricing.gpt-x.input: must be a number >= 0, got -1");
        assertThat(problems("pricing: {gpt-x: {input: 1}}\n"))
                .singleElement()
                .asString()
                .contains("pricing.gpt-x.output: is required");
        assertThat(problems("pricing: {gpt-x: {input: 1, output: 1, cache: 1}}\n"))
                .singleElement()
                .asString()
                .contains("pricing.gpt-x")
                .contains("cache");
        assertThat(problems("limits: {case_seconds: 0}\n"))
                .singleElement()
                .asString()
                .contains("limits.case_seconds");
        assertThat(problems("limits: {case_cost_usd: 0}\n"))
                .singleElement()
                .asString()
                .contains("limits.case_cost_usd: must be greater than 0");
        assertThat(problems("limits: {case_cost_usd: 1}\npricing: {other: {input: 1, output: 1}}\n"))
                .singleElement()
                .asString()
                .contains("limits.case_cost_usd: needs a price for the agent's model \"gpt-x\"");
    }
}
