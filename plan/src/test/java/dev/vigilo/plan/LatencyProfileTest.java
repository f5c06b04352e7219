package dev.vigilo.plan;

import static dev.vigilo.plan.EvaluatorKindsProfileTest.canonical;
import static dev.vigilo.plan.EvaluatorKindsProfileTest.problems;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The latency evaluator in a profile: max_ms required, an integer of 1..86,400,000, errors located. */
class LatencyProfileTest {
    @Test
    void isWrittenCanonically() {
        assertThat(canonical("  - {name: e, kind: latency, max_ms: 1500}\n"))
                .contains("\"evaluators\":[{\"name\":\"e\",\"kind\":\"latency\",\"max_ms\":1500}]");
        assertThat(canonical("  - {name: e, kind: latency, max_ms: 86400000, applies_to: {groups: [g]}}\n"))
                .contains(
                        "{\"name\":\"e\",\"kind\":\"latency\",\"max_ms\":86400000,\"applies_to\":{\"groups\":[\"g\"]}}");
    }

    @Test
    void badLimitsAreProblemsWithTheirLocation() {
        assertThat(problems("  - {name: e, kind: latency}\n"))
                .containsExactly("p.yaml:4:5: evaluators[0].max_ms: is required: the agent's most milliseconds that"
                        + " pass, 1..86400000");
        assertThat(problems("  - {name: e, kind: latency, max_ms: 0}\n"))
                .containsExactly("p.yaml:4:38: evaluators[0].max_ms: must be an integer in [1, 86400000], got 0");
        assertThat(problems("  - {name: e, kind: latency, max_ms: 86400001}\n"))
                .containsExactly(
                        "p.yaml:4:38: evaluators[0].max_ms: must be an integer in [1, 86400000], got 86400001");
        assertThat(problems("  - {name: e, kind: latency, max_ms: 1.5}\n"))
                .containsExactly("p.yaml:4:38: evaluators[0].max_ms: must be an integer in [1, 86400000], got 1.5");
        assertThat(problems("  - {name: e, kind: latency, max_ms: '100'}\n"))
                .containsExactly("p.yaml:4:38: evaluators[0].max_ms: must be an integer in [1, 86400000], got \"100\"");
        assertThat(problems("  - {name: e, kind: latency, max_ms: 100, threshold: 1}\n"))
                .singleElement()
                .asString()
                .startsWith("p.yaml:4:")
                .contains("evaluators[0].threshold: unknown key; allowed here: name, kind, applies_to, max_ms");
    }
}
