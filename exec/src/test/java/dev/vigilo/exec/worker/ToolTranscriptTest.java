package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run whose http agent calls a command tool: each model call and each tool result is a step of the transcript
 * (the published reader accepts it), the tool_use evaluator judges the calls, and the receipt sums every model call's
 * tokens.
 */
class ToolTranscriptTest {
    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;
    Path tool;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 3);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        tool = dir.resolve("calc.py");
        Files.writeString(tool, "import json, sys\nargs = json.load(sys.stdin)\nprint(args['a'] * args['b'])\n");
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            if ("tool".equals(req.lastRole())) {
                JsonNode m = req.messages();
                return Reply.content(
                                m.get(m.size() - 1).path("content").asText().strip())
                        .withUsage(20, 2);
            }
            // "what is N * 2": the model asks the tool.
            String n = req.lastUserMessage().replaceAll("\\D+", " ").strip().split(" ")[0];
            return Reply.toolCalls("call-" + n, "multiply", "{\"a\":" + n + ",\"b\":2}")
                    .withUsage(10, 3);
        });
    }

    @AfterEach
    void tearDown() {
        llm.close();
        placements.close();
        fx.close();
    }

    @Test
    void everyTurnIsRecordedAndTheToolCallsAreJudged() throws Exception {
        UUID run = fx.prepare("""
                name: tools
                agent:
                  kind: http
                  url: "%s"
                  model: test-model
                  max_turns: 3
                  tools:
                    - name: multiply
                      description: Multiplies two numbers.
                      parameters: {type: object, properties: {a: {type: number}, b: {type: number}}, required: [a, b]}
                      command: [python3, "%s"]
                      timeout_seconds: 20
                evaluators:
                  - {name: right, kind: exact_match}
                  - name: used
                    kind: tool_use
                    require: [{name: multiply, arguments: {b: 2}}]
                    max_calls: 1
                gates:
                  - {name: all, required_evaluators: [right, used], min_pass_rate: 1}
                """.formatted(llm.chatUrl(), tool));
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, TranscriptTest.fast(1), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");

        int cases = 0;
        Path oneLog = null;
        for (Receipt r : TranscriptTest.receipts(fx, placements, run)) {
            for (Receipt.CaseResult c : r.cases()) {
                cases++;
                assertThat(c.errored()).as(c.toString()).isFalse();
                assertThat(c.evaluatorResults()).hasSize(2).allMatch(Receipt.EvaluatorResult::passed);
                Receipt.ModelUsage u = c.usage().orElseThrow().models().get(0);
                assertThat(u.calls()).isEqualTo(2);
                assertThat(u.inputTokens()).isEqualTo(30);
                assertThat(u.outputTokens()).isEqualTo(5);
                Receipt.TranscriptRef last = c.transcripts().get(c.transcripts().size() - 1);
                Path log = Files.createTempDirectory(dir, "t").resolve("session.jsonl.zstd");
                Files.write(log, ChunkRows.readTranscript(fx.store, last, "transcript"));
                VerifyReport v = SessionVerifier.verify(log);
                assertThat(v.accepted()).as(v.toText()).isTrue();
                List<JsonNode> ev = TranscriptTest.events(log);
                List<String> types = TranscriptTest.types(ev);
                assertThat(types)
                        .containsSubsequence(
                                "step/start",
                                "request/context",
                                "request/header",
                                "assistant/message",
                                "tool/call",
                                "tool/result",
                                "step/end",
                                "step/start",
                                "request/context",
                                "assistant/message",
                                "step/end",
                                "vigilo/output",
                                "turn/end",
                                "vigilo/evaluator",
                                "vigilo/gates");
                assertThat(types.stream().filter("request/header"::equals)).hasSize(1);
                JsonNode offered = ev.get(types.indexOf("vigilo/tools"));
                assertThat(types.stream().filter("vigilo/tools"::equals)).hasSize(1);
                assertThat(offered.path("ignorable").asBoolean()).isTrue();
                assertThat(offered.at("/data/tools/0/function/name").asText()).isEqualTo("multiply");
                JsonNode result = ev.get(types.indexOf("tool/result"));
                assertThat(result.at("/data/step").asInt()).isEqualTo(1);
                String n = c.id().substring("case-".length());
                assertThat(result.at("/data/message/source/callId").asText()).isEqualTo("call-" + n);
                assertThat(result.at("/data/message/content/0/content/0/text")
                                .asText()
                                .strip())
                        .isEqualTo(Integer.toString(Integer.parseInt(n) * 2));
                JsonNode second = ev.get(types.lastIndexOf("assistant/message"));
                assertThat(second.at("/data/step").asInt()).isEqualTo(2);
                assertThat(second.at("/data/usage/inputTokens").asInt()).isEqualTo(20);
                oneLog = log;
            }
        }
        assertThat(cases).isEqualTo(3);
        JsonNode verdict = Referee.get().judge(oneLog);
        assertThat(verdict.path("verdict").asText()).as(verdict.toString()).isEqualTo("ACCEPT");
    }

    @Test
    void aCaseStoppedAtMaxTurnsIsErroredAndItsTranscriptIsAccepted() throws Exception {
        // Calls without ids: the worker names them call_<model call>_<position>, in the request and the transcript.
        llm.answerWith(
                req -> Reply.toolCalls("", "multiply", "{\"a\":1,\"b\":2}").withUsage(10, 3));
        UUID run = fx.prepare("""
                name: looping
                agent:
                  kind: http
                  url: "%s"
                  model: test-model
                  max_turns: 2
                  parallel_tool_calls: false
                  tools:
                    - {name: multiply, command: [python3, "%s"]}
                evaluators:
                  - {name: right, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [right], min_pass_rate: 1}
                """.formatted(llm.chatUrl(), tool));
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, TranscriptTest.fast(1), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        Path oneLog = null;
        for (Receipt r : TranscriptTest.receipts(fx, placements, run)) {
            for (Receipt.CaseResult c : r.cases()) {
                assertThat(c.errored()).isTrue();
                assertThat(c.error().orElseThrow().type()).isEqualTo("max_turns");
                assertThat(c.attempts()).isEqualTo(1);
                assertThat(c.usage().orElseThrow().models().get(0).calls()).isEqualTo(2);
                Receipt.TranscriptRef last = c.transcripts().get(c.transcripts().size() - 1);
                Path log = Files.createTempDirectory(dir, "t").resolve("session.jsonl.zstd");
                Files.write(log, ChunkRows.readTranscript(fx.store, last, "transcript"));
                VerifyReport v = SessionVerifier.verify(log);
                assertThat(v.accepted()).as(v.toText()).isTrue();
                List<String> types = TranscriptTest.types(TranscriptTest.events(log));
                // Two steps: the first call's result, then the calls not run; the turn ends with the error.
                assertThat(types.stream().filter("step/start"::equals)).hasSize(2);
                assertThat(types.stream().filter("tool/result"::equals)).hasSize(1);
                assertThat(types).containsSubsequence("tool/call", "step/end", "vigilo/attempt", "turn/end");
                List<JsonNode> events = TranscriptTest.events(log);
                assertThat(events.get(types.indexOf("tool/result"))
                                .at("/data/message/source/callId")
                                .asText())
                        .isEqualTo("call_1_1");
                assertThat(events.get(types.lastIndexOf("tool/call"))
                                .at("/data/callId")
                                .asText())
                        .isEqualTo("call_2_1");
                oneLog = log;
            }
        }
        JsonNode verdict = Referee.get().judge(oneLog);
        assertThat(verdict.path("verdict").asText()).as(verdict.toString()).isEqualTo("ACCEPT");
    }
}
