package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.view.CaseResults;
import dev.vigilo.exec.view.RunTranscripts;
import dev.vigilo.exec.worker.LongTranscript;
import dev.vigilo.exec.worker.TranscriptTest;
import dev.vigilo.exec.worker.Worker;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The dashboard over a tool-calling run, for the transcript pages' tests: a run executed by a real worker whose http
 * agent (with a long system prompt) calls a command tool {@value #CALLS} times per case against a local
 * OpenAI-compatible server before it answers; the tool's output carries markup that must be shown as text. Its cases
 * are judged by exact match and by a judge. Beside it, a session log of {@value #LONG_EVENTS}+ events written as a
 * worker writes one ({@link LongTranscript}), and case 1's transcript copied to a file, both opened by the viewer.
 */
final class ToolRun implements AutoCloseable {
    static final int CALLS = 4;
    static final int LONG_EVENTS = 100_000;
    /** What the tool prints after its figure: markup a page must escape. */
    static final String MARKUP = "<img src=x onerror=alert(1)>";

    static final String SYSTEM_PROMPT =
            "You are a careful calculator. Use the multiply tool for every step. ".repeat(30)
                    + "End of the system prompt.";

    final ExecFixture fx;
    final Placements placements;
    final OpenAiTestServer llm;
    final UUID run;
    final Path longLog;
    final int longEvents;
    final Path caseLog;
    final Dashboard dashboard;
    final String base;

    ToolRun(Path dir) throws IOException {
        fx = new ExecFixture(dir, 3);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        Path tool = dir.resolve("calc.py");
        Files.writeString(
                tool,
                "import json, sys\nargs = json.load(sys.stdin)\nprint(args['a'] * args['b'], '" + MARKUP + "')\n");
        llm = OpenAiTestServer.start();
        llm.answerWith(req -> {
            if (req.body().path("model").asText().equals("judge-model")) {
                return Reply.judgement(8, "close to the reference").withUsage(40, 5);
            }
            JsonNode messages = req.messages();
            int results = 0;
            for (JsonNode m : messages) {
                if (m.path("role").asText().equals("tool")) {
                    results++;
                }
            }
            String n = req.lastUserMessage().replaceAll("\\D+", " ").strip().split(" ")[0];
            if (results < CALLS) {
                // The same call again: a run of repeated tool steps.
                return Reply.toolCalls("call-" + (results + 1), "multiply", "{\"a\":" + n + ",\"b\":2}")
                        .withUsage(10 + results, 3);
            }
            String last =
                    messages.get(messages.size() - 1).path("content").asText().strip();
            return Reply.content(last.split(" ")[0]).withUsage(30, 2);
        });
        run = fx.prepare("""
                name: tool-transcripts
                agent:
                  kind: http
                  url: "%s"
                  model: test-model
                  system_prompt: "%s"
                  max_turns: 8
                  tools:
                    - name: multiply
                      description: Multiplies two numbers.
                      parameters: {type: object, properties: {a: {type: number}, b: {type: number}}, required: [a, b]}
                      command: [python3, "%s"]
                      timeout_seconds: 20
                evaluators:
                  - {name: right, kind: exact_match}
                  - name: quality
                    kind: judge
                    url: "%s"
                    model: judge-model
                    rubric: "Is {{output}} the answer to {{input}}?"
                    scale: {min: 0, max: 10}
                gates:
                  - {name: all, required_evaluators: [right, quality], min_pass_rate: 1}
                """.formatted(llm.chatUrl(), SYSTEM_PROMPT, tool, llm.chatUrl()));
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, TranscriptTest.fast(1), Worker.Listener.NONE).run();
        if (!fx.runStatus(run).equals("settled")) {
            throw new IllegalStateException("the tool run did not settle: " + fx.runStatus(run));
        }
        longLog = dir.resolve("sessions/long/session.jsonl.zstd");
        longEvents = LongTranscript.write(longLog, LONG_EVENTS);
        caseLog = dir.resolve("sessions/case-1/session.jsonl.zstd");
        try (CaseResults cases = new CaseResults(placements, fx.storage)) {
            List<RunTranscripts.Attempt> attempts =
                    cases.find(run, 1).orElseThrow().transcripts();
            Files.createDirectories(caseLog.getParent());
            Files.write(
                    caseLog,
                    dev.vigilo.exec.record.ChunkRows.readTranscript(
                            fx.store,
                            attempts.get(attempts.size() - 1).transcript(),
                            attempts.get(attempts.size() - 1).offset(),
                            "transcript"));
        }
        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                DashboardSources.all(
                        fx.control.jdbi(),
                        placements,
                        fx.storage,
                        Optional.empty(),
                        List.of(longLog, caseLog),
                        List.of(dir)));
        base = "http://127.0.0.1:" + dashboard.port();
    }

    /** The committed events of case {@code ordinal}'s last attempt, as the module's own reader streams them. */
    List<JsonNode> events(long ordinal) throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        try (CaseResults cases = new CaseResults(placements, fx.storage)) {
            List<RunTranscripts.Attempt> attempts =
                    cases.find(run, ordinal).orElseThrow().transcripts();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            new RunTranscripts(placements, fx.storage).write(run, attempts.get(attempts.size() - 1), out);
            List<JsonNode> events = new ArrayList<>();
            for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank()) {
                    events.add(mapper.readTree(line));
                }
            }
            return events;
        }
    }

    @Override
    public void close() {
        if (dashboard != null) {
            dashboard.close();
        }
        llm.close();
        placements.close();
        fx.close();
    }
}
