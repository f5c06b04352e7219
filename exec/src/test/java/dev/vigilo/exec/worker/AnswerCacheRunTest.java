package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.view.ExecutionStatusReader;
import java.io.IOException;
import java.nio.file.Path;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agent.cache: true} across runs: a second run of the same cases in the same store sends nothing to the agent's
 * endpoint, answers every case from the first run's kept answers with the same outputs, records them as cached with
 * no tokens and no cost, and verifies; a run without {@code cache} sends every request again.
 */
class AnswerCacheRunTest {
    private static final int CASES = 40;
    private static final Pattern CASE = Pattern.compile("what is (\\d+) \\* 2");

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, CASES);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            Matcher m = CASE.matcher(req.lastUserMessage());
            long n = m.find() ? Long.parseLong(m.group(1)) : -1;
            return OpenAiTestServer.Reply.content(Long.toString(n * 2)).withUsage(10, 2);
        });
    }

    @AfterEach
    void tearDown() {
        llm.close();
        placements.close();
        fx.close();
    }

    private UUID run(boolean cache) {
        UUID run = fx.prepare("""
                name: cached
                agent: {kind: http, url: "%s", model: m%s}
                evaluators: [{name: exact, kind: exact_match}]
                gates: [{name: all, required_evaluators: [exact], min_pass_rate: 0.9}]
                pricing: {test: {input: 1, output: 1}}
                """.formatted(llm.chatUrl(), cache ? ", cache: true" : ""));
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, TranscriptTest.fast(4), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        return run;
    }

    @Test
    void aSecondRunIsAnsweredFromTheFirstRunsAnswers() {
        UUID first = run(true);
        assertThat(llm.requests()).hasSize(CASES);
        UUID second = run(true);
        assertThat(llm.requests()).as("the second run sent nothing").hasSize(CASES);

        for (Receipt r : TranscriptTest.receipts(fx, placements, second)) {
            for (Receipt.CaseResult c : r.cases()) {
                assertThat(c.output()).contains(Long.toString(c.ordinal() * 2));
                assertThat(c.usage().orElseThrow().cachedAnswers()).isEqualTo(1);
                assertThat(c.usage().orElseThrow().models()).isEmpty();
                assertThat(c.gates()).containsEntry("all", Receipt.GateOutcome.PASSED);
            }
        }
        ExecutionStatusReader reader = new ExecutionStatusReader(placements);
        assertThat(reader.status(first).runUsage().orElseThrow().agent().calls())
                .isEqualTo(CASES);
        ExecutionStatus s = reader.status(second);
        assertThat(s.runUsage().orElseThrow().all().calls()).isZero();
        assertThat(s.runUsage().orElseThrow().all().costUsd()).contains(java.math.BigDecimal.ZERO);
        assertThat(new RunVerifier(placements, fx.storage).verify(second).problem())
                .isEmpty();

        run(false);
        assertThat(llm.requests()).as("without cache every request is sent").hasSize(2 * CASES);
    }
}
