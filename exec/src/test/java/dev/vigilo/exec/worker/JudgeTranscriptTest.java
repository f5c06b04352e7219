package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.sessionlog.Referee;
import dev.vigilo.sessionlog.SessionVerifier;
import dev.vigilo.sessionlog.VerifyReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run with a judge and a panel: every judge request and answer is recorded in the case's last attempt transcript, after the
 * output and before the evaluators' results, and the published reader accepts it.
 */
class JudgeTranscriptTest {
    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;
    final AtomicInteger judgeCalls = new AtomicInteger();

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 4);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            if ("judge-model".equals(req.body().path("model").asText())) {
                // The first judge call fails once: both attempts are recorded.
                if (judgeCalls.incrementAndGet() == 1) {
                    return OpenAiTestServer.Reply.error(503, "busy");
                }
                return OpenAiTestServer.Reply.judgement(9, "right").withUsage(40, 5);
            }
            if ("grader".equals(req.body().path("model").asText())) {
                return OpenAiTestServer.Reply.judgement("A", "fine");
            }
            return OpenAiTestServer.Reply.content("42").withUsage(5, 1);
        });
    }

    @AfterEach
    void tearDown() {
        llm.close();
        placements.close();
        fx.close();
    }

    @Test
    void judgeCallsAreRecordedBetweenTheOutputAndTheEvaluatorsResults() throws Exception {
        UUID run = fx.prepare("""
                name: judged
                agent: {kind: http, url: "%s", model: test-model}
                evaluators:
                  - name: quality
                    kind: judge
                    url: "%s"
                    model: judge-model
                    rubric: "Is {{output}} the answer to {{input}}?"
                    scale: {min: 0, max: 10}
                    max_attempts: 2
                  - name: agreement
                    kind: panel
                    aggregate: majority
                    judges:
                      - {name: a, url: "%s", model: grader, rubric: "Grade {{output}}", grades: {A: 1, F: 0}}
                      - {name: b, url: "%s", model: grader, rubric: "Grade {{output}} again", grades: {A: 1, F: 0}}
                gates:
                  - {name: all, required_evaluators: [quality, agreement], min_pass_rate: 0.5}
                """.formatted(llm.chatUrl(), llm.chatUrl(), llm.chatUrl(), llm.chatUrl()));
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, TranscriptTest.fast(1), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");

        int cases = 0;
        int judgeRequests = 0;
        Path oneLog = null;
        for (Receipt r : TranscriptTest.receipts(fx, placements, run)) {
            for (Receipt.CaseResult c : r.cases()) {
                cases++;
                assertThat(c.evaluatorResults()).hasSize(2).allMatch(Receipt.EvaluatorResult::passed);
                Receipt.TranscriptRef last = c.transcripts().get(c.transcripts().size() - 1);
                Path log = Files.createTempDirectory(dir, "t").resolve("session.jsonl.zstd");
                Files.write(log, ChunkRows.readTranscript(fx.store, last, "transcript"));
                VerifyReport v = SessionVerifier.verify(log);
                assertThat(v.accepted()).as(v.toText()).isTrue();
                List<JsonNode> ev = TranscriptTest.events(log);
                List<String> types = TranscriptTest.types(ev);
                assertThat(types)
                        .containsSubsequence(
                                "vigilo/output",
                                "turn/end",
                                "vigilo/judge-request",
                                "vigilo/judge-response",
                                "vigilo/evaluator",
                                "vigilo/gates");
                JsonNode request = ev.get(types.indexOf("vigilo/judge-request"));
                assertThat(request.path("ignorable").asBoolean()).isTrue();
                assertThat(request.at("/data/name").asText()).isEqualTo("quality");
                assertThat(request.at("/data/evaluator").asInt()).isZero();
                assertThat(request.at("/data/request/messages/1/content").asText())
                        .isEqualTo("Is 42 the answer to what is " + c.ordinal() + " * 2?");
                JsonNode response = ev.stream()
                        .filter(e -> e.path("type").asText().equals("vigilo/judge-response"))
                        .filter(e -> e.at("/data/evaluator").asInt() == 0)
                        .reduce((a, b) -> b)
                        .orElseThrow();
                assertThat(response.at("/data/status").asInt()).isEqualTo(200);
                assertThat(response.at("/data/response/usage/prompt_tokens").asInt())
                        .isEqualTo(40);
                assertThat(response.at("/data/ms").canConvertToLong()).isTrue();
                // The panel's judges, in order, under the panel's index.
                assertThat(ev.stream()
                                .filter(e -> e.path("type").asText().equals("vigilo/judge-request"))
                                .filter(e -> e.at("/data/evaluator").asInt() == 1)
                                .map(e -> e.at("/data/name").asText()))
                        .containsExactly("agreement/a", "agreement/b");
                judgeRequests += (int) ev.stream()
                        .filter(e -> e.path("type").asText().equals("vigilo/judge-request"))
                        .filter(e -> e.at("/data/evaluator").asInt() == 0)
                        .count();
                oneLog = log;
            }
        }
        assertThat(cases).isEqualTo(4);
        // Four cases, one of whose judge calls was retried: five requests, each recorded once.
        assertThat(judgeRequests).isEqualTo(5).isEqualTo(judgeCalls.get());
        JsonNode verdict = Referee.get().judge(oneLog);
        assertThat(verdict.path("verdict").asText()).as(verdict.toString()).isEqualTo("ACCEPT");
    }
}
