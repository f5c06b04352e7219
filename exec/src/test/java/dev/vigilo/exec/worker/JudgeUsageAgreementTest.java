package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.UsageSummary;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.stats.KrippendorffAlpha;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run with a priced agent and a panel of two priced judges over the real local endpoint: the judges' tokens are
 * counted apart from the agent's and priced, each panel result carries its judges' votes, the panel's agreement
 * (Krippendorff's alpha) is summed without per-case data and recorded at settlement, equal to alpha computed here from
 * the scores the endpoint gave, and {@code vigilo verify} recomputes both and catches an altered agreement row.
 */
class JudgeUsageAgreementTest {
    private static final int CASES = 30;
    private static final Pattern CASE = Pattern.compile("what is (\\d+) \\* 2");

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;

    /** The score (of 10) judge {@code judge} gives case {@code n}: the judges agree roughly, not exactly. */
    static int score(String judge, long n) {
        return judge.equals("a") ? (int) (n % 6) * 2 : (int) Math.min(10, (n % 6) * 2 + n % 3);
    }

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, CASES);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            String model = req.body().path("model").asText();
            Matcher m = CASE.matcher(req.body().toString());
            long n = m.find() ? Long.parseLong(m.group(1)) : -1;
            if (model.startsWith("judge-")) {
                String judge = model.substring("judge-".length());
                return answeredAs(
                        model,
                        OpenAiTestServer.Reply.judgement(score(judge, n), "graded " + judge)
                                .withUsage(100, 20));
            }
            return answeredAs(
                    model, OpenAiTestServer.Reply.content(Long.toString(n * 2)).withUsage(10, 2));
        });
    }

    /** {@code reply} naming {@code model} in its {@code model}, as real endpoints do (pricing is by that name). */
    static OpenAiTestServer.Reply answeredAs(String model, OpenAiTestServer.Reply reply) {
        try {
            var mapper = new com.fasterxml.jackson.databind.ObjectMapper();
            var body = (com.fasterxml.jackson.databind.node.ObjectNode) mapper.readTree(reply.body());
            body.put("model", model);
            return new OpenAiTestServer.Reply(
                    reply.status(), mapper.writeValueAsBytes(body), reply.headers(), reply.latency(), reply.missing());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @AfterEach
    void tearDown() {
        llm.close();
        placements.close();
        fx.close();
    }

    @Test
    void judgeTokensAreCountedApartAndThePanelsAgreementIsRecordedAndVerified() {
        String url = llm.chatUrl().toString();
        UUID run = fx.prepare("""
                name: panel
                agent: {kind: http, url: "%s", model: agent-model}
                evaluators:
                  - {name: exact, kind: exact_match}
                  - name: quality
                    kind: panel
                    aggregate: mean
                    judges:
                      - {name: a, url: "%s", model: judge-a, rubric: "Grade {{output}} for {{input}}", scale: {min: 0, max: 10}}
                      - {name: b, url: "%s", model: judge-b, rubric: "Grade {{output}} for {{input}}", scale: {min: 0, max: 10}}
                gates:
                  - {name: all, required_evaluators: [exact, quality], min_pass_rate: 0.1}
                pricing:
                  agent-model: {input: 1, output: 2}
                  judge-a: {input: 3, output: 4}
                """.formatted(url, url, url));
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, TranscriptTest.fast(4), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");

        KrippendorffAlpha.Sums expected = KrippendorffAlpha.Sums.ZERO;
        for (Receipt r : TranscriptTest.receipts(fx, placements, run)) {
            for (Receipt.CaseResult c : r.cases()) {
                Receipt.EvaluatorResult panel = c.evaluatorResults().get(1);
                assertThat(panel.votes()).extracting(Receipt.Vote::judge).containsExactly("a", "b");
                assertThat(panel.votes().get(0).score()).contains(score("a", c.ordinal()) / 10.0);
                assertThat(panel.votes().get(1).score()).contains(score("b", c.ordinal()) / 10.0);
                expected = expected.plus(
                        KrippendorffAlpha.Sums.ofUnit(score("a", c.ordinal()) / 10.0, score("b", c.ordinal()) / 10.0));
            }
        }

        ExecutionStatus status = new ExecutionStatusReader(placements).status(run);
        UsageSummary usage = status.runUsage().orElseThrow();
        assertThat(usage.agent().calls()).isEqualTo(CASES);
        assertThat(usage.agent().costUsd()).contains(new BigDecimal("0.00042")); // 30 x (10 x 1 + 2 x 2) per million
        assertThat(usage.judges().calls()).isEqualTo(2 * CASES);
        assertThat(usage.judges().inputTokens()).isEqualTo(2 * CASES * 100);
        assertThat(usage.judges().costUsd()).as("judge-b has no price").isEmpty();
        assertThat(usage.unpricedModels()).containsExactly("judge-b");
        assertThat(usage.all().costUsd()).isEmpty();

        ExecutionStatus.Agreement agreement =
                status.agreement().get(ExecutionStatus.ALL_CASES).get("quality");
        assertThat(agreement.values()).isEqualTo(2 * CASES);
        assertThat(agreement.alpha()).isEqualTo(KrippendorffAlpha.of(expected));
        assertThat(agreement.alpha().orElseThrow()).isBetween(0.5, 1.0);
        assertThat(status.agreement().get("all").get("quality")).isEqualTo(agreement);

        RunVerifier verifier = new RunVerifier(placements, fx.storage);
        assertThat(verifier.verify(run).problem()).isEmpty();
        fx.control
                .jdbi()
                .useHandle(h -> h.execute(
                        "UPDATE run_agreement SET disagreement = disagreement + 1 WHERE run_id = ? AND scope = '*'",
                        run));
        assertThat(verifier.verify(run).problem().orElseThrow())
                .contains("the run records judge agreement sums")
                .contains("the receipts give");
    }
}
