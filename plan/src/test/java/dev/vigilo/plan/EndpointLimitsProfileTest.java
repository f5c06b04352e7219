package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** An endpoint's {@code rate_limit} and {@code circuit_breaker}: validated with locations, frozen canonically. */
class EndpointLimitsProfileTest {
    static final String HEAD =
            "name: p\nagent: {kind: http, url: \"http://127.0.0.1:9/v1/chat/completions\"," + " model: gpt-x";
    static final String TAIL = "}\nevaluators: [{name: e, kind: exact_match}]\n"
            + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";

    static Profile parse(String agentKeys) {
        return ProfileParser.parse((HEAD + agentKeys + TAIL).getBytes(StandardCharsets.UTF_8), "p.yaml");
    }

    static String canonical(String agentKeys) {
        return new String(ProfileJson.encode(parse(agentKeys)), StandardCharsets.UTF_8);
    }

    static List<String> problems(String yaml) {
        try {
            ProfileParser.parse(yaml.getBytes(StandardCharsets.UTF_8), "p.yaml");
        } catch (ProfileException e) {
            return e.problems();
        }
        throw new AssertionError("the profile was accepted");
    }

    @Test
    void aProfileWithoutLimitsKeepsItsCanonicalBytes() {
        assertThat(canonical("")).doesNotContain("rate_limit").doesNotContain("circuit_breaker");
    }

    @Test
    void theAgentsLimitsAreFrozenWithTheBreakersDefaultsFilledIn() {
        String c = canonical(", rate_limit: {requests_per_minute: 600, tokens_per_minute: 200000, max_in_flight: 64},"
                + " circuit_breaker: {}");
        assertThat(c)
                .contains("\"rate_limit\":{\"requests_per_minute\":600,\"tokens_per_minute\":200000,"
                        + "\"max_in_flight\":64}")
                .contains("\"circuit_breaker\":{\"failures\":5,\"cool_down_seconds\":30}");
        assertThat(canonical(", rate_limit: {requests_per_minute: 60}"))
                .contains("\"rate_limit\":{\"requests_per_minute\":60}");
    }

    @Test
    void aJudgeAndAPanelJudgeTakeLimitsToo() {
        Profile p = ProfileParser.parse(
                ("name: p\nagent: {kind: command, command: [a]}\nevaluators:\n"
                                + "  - {name: q, kind: judge, url: \"http://127.0.0.1:9/v1\", model: m, rubric: r,"
                                + " scale: {min: 0, max: 1}, rate_limit: {requests_per_minute: 300}}\n"
                                + "  - {name: pan, kind: panel, aggregate: mean, judges: ["
                                + "{name: a, url: \"http://127.0.0.1:9/v1\", model: m1, rubric: r, scale: {min: 0, max: 1},"
                                + " circuit_breaker: {failures: 2, cool_down_seconds: 5}},"
                                + "{name: b, url: \"http://127.0.0.1:9/v1\", model: m2, rubric: r, scale: {min: 0, max: 1}}]}\n"
                                + "gates: [{name: g, required_evaluators: [q], min_pass_rate: 1}]\n")
                        .getBytes(StandardCharsets.UTF_8),
                "p.yaml");
        String c = new String(ProfileJson.encode(p), StandardCharsets.UTF_8);
        assertThat(c)
                .contains("\"rate_limit\":{\"requests_per_minute\":300}")
                .contains("\"circuit_breaker\":{\"failures\":2,\"cool_down_seconds\":5}");
    }

    @Test
    void badLimitsAreLocated() {
        assertThat(problems(HEAD + ", rate_limit: {requests_per_minute: 0, burst: 3}, circuit_breaker: {failures: -1}"
                        + TAIL))
                .anySatisfy(l -> assertThat(l)
                        .contains("agent.rate_limit.requests_per_minute: must be an integer in [1, 1000000], got 0"))
                .anySatisfy(l -> assertThat(l).contains("agent.rate_limit.burst: unknown key"))
                .anySatisfy(
                        l -> assertThat(l).contains("agent.circuit_breaker.failures: must be an integer in [1, 1000]"));
        assertThat(problems(HEAD + ", rate_limit: {}" + TAIL))
                .anySatisfy(l -> assertThat(l).contains("agent.rate_limit: is empty"));
        assertThat(problems(HEAD + ", rate_limit: 600" + TAIL))
                .anySatisfy(l -> assertThat(l).contains("agent.rate_limit: must be a mapping"));
    }
}
