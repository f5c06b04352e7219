package dev.vigilo.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example agent (examples/agent/QuickAgent.java, launched with {@code java}) through the command agent on every
 * case of examples/quickstart.jsonl, from the repository root as the quickstart runs it.
 */
class QuickAgentTest {
    @TempDir
    Path scratch;

    static Path repositoryRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.exists(p.resolve("examples/quickstart.jsonl"))) {
                return p;
            }
        }
        throw new IllegalStateException(
                "examples/quickstart.jsonl not found above " + Path.of("").toAbsolutePath());
    }

    @Test
    void answersEveryQuickstartCaseDeterministicallyWithPassesAndFailures() throws Exception {
        Path root = repositoryRoot();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        AgentEnvironment env = TestSupport.env(scratch).withWorkingDirectory(root);
        List<String> lines = Files.readAllLines(root.resolve("examples/quickstart.jsonl"), StandardCharsets.UTF_8);
        Map<String, String> answers = new LinkedHashMap<>();
        Map<String, String> expected = new LinkedHashMap<>();
        Map<String, Boolean> exact = new LinkedHashMap<>();
        Map<String, Boolean> contains = new LinkedHashMap<>();
        EvaluatorSet evaluators = Evaluators.fromPlan(
                TestSupport.q("[{'index':0,'name':'exact','kind':'exact_match','case_sensitive':true,'trim':true},"
                        + "{'index':1,'name':'mentions_answer','kind':'contains','case_sensitive':true}]"),
                env);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try (Agent agent = Agents.create(
                TestSupport.commandAgent(java, "examples/agent/QuickAgent.java").put("timeout_seconds", 120), env)) {
            List<Future<AgentOutcome>> outcomes = new ArrayList<>();
            List<CaseRecord> cases = new ArrayList<>();
            for (int i = 0; i < lines.size(); i++) {
                JsonNode n = TestSupport.parse(lines.get(i));
                CaseRecord c =
                        new CaseRecord(n.get("id").asText(), i, lines.get(i).getBytes(StandardCharsets.UTF_8));
                cases.add(c);
                expected.put(c.id(), n.get("expected").asText());
                outcomes.add(pool.submit(() -> agent.run(AgentCall.of(c))));
            }
            for (int i = 0; i < cases.size(); i++) {
                AgentOutcome o = outcomes.get(i).get(180, TimeUnit.SECONDS);
                assertThat(o.error()).as(cases.get(i).id()).isEmpty();
                assertThat(o.attempts()).hasSize(1);
                String output = o.output().orElseThrow();
                answers.put(cases.get(i).id(), output);
                List<EvaluatorResult> results = evaluators.evaluate(0b11L, cases.get(i), output);
                exact.put(cases.get(i).id(), results.get(0).passed());
                contains.put(cases.get(i).id(), results.get(1).passed());
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(answers)
                .containsExactlyEntriesOf(ordered(
                        "arith-001", "42",
                        "arith-002", "72",
                        "arith-003", "64",
                        "arith-004", "243",
                        "capital-001", "Paris",
                        "capital-002", "Tokyo",
                        "capital-003", "Sydney",
                        "capital-004", "Ottawa, Ontario",
                        "unit-001", "250",
                        "unit-002", "I don't know",
                        "text-001", "oligiv",
                        "text-002", "10"));
        // Nine exact passes, three failures; Canada fails exact_match but passes contains.
        assertThat(exact.entrySet().stream().filter(Map.Entry::getValue).count())
                .isEqualTo(9);
        assertThat(exact).containsEntry("capital-003", false).containsEntry("capital-004", false);
        assertThat(exact).containsEntry("unit-002", false);
        assertThat(contains).containsEntry("capital-004", true).containsEntry("capital-003", false);
        for (Map.Entry<String, String> e : answers.entrySet()) {
            assertThat(exact.get(e.getKey())).isEqualTo(e.getValue().equals(expected.get(e.getKey())));
        }
    }

    private static Map<String, String> ordered(String... keyValues) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put(keyValues[i], keyValues[i + 1]);
        }
        return m;
    }
}
