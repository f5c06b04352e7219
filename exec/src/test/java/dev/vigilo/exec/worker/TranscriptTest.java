package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.agent.AgentEnvironment;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.OutageWaits;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.placement.ShardRoutes;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.ReceiptParser;
import dev.vigilo.exec.record.TranscriptStore;
import dev.vigilo.exec.view.CaseResults;
import dev.vigilo.exec.view.RunTranscripts;
import dev.vigilo.sessionlog.Epoch;
import dev.vigilo.sessionlog.EpochSource;
import dev.vigilo.sessionlog.Referee;
import dev.vigilo.sessionlog.SessionCat;
import dev.vigilo.sessionlog.SessionHeader;
import dev.vigilo.sessionlog.SessionLogWriter;
import dev.vigilo.sessionlog.SessionVerifier;
import dev.vigilo.sessionlog.VerifyReport;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectConflictException;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transcripts of real executions: an http agent against an OpenAI-compatible test server that answers with tool
 * calls, text and failures, and a command agent that writes its own events. Every transcript must be accepted by the
 * published reader (the referee) and by Vigilo's, carry the lease generation as its writer epoch, and be referenced
 * by its receipt by key, length and SHA-256. A stale worker's transcripts never count and cannot touch the current
 * generation's objects.
 */
public class TranscriptTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;
    final Map<Long, AtomicInteger> calls = new ConcurrentHashMap<>();

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 24);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        llm = OpenAiTestServer.start();
        // Case i: i % 3 == 0 calls a tool; i % 3 == 1 answers i * 2; i % 3 == 2 fails once (500), then answers.
        llm.answerWith(req -> {
            Matcher m = QUESTION.matcher(req.lastUserMessage());
            if (!m.find()) {
                return OpenAiTestServer.Reply.content("?");
            }
            long i = Long.parseLong(m.group(1));
            int n = calls.computeIfAbsent(i, k -> new AtomicInteger()).incrementAndGet();
            if (i % 3 == 0) {
                return OpenAiTestServer.Reply.toolCall("multiply", "{\"a\":" + i + ",\"b\":2}")
                        .withUsage(20, 7);
            }
            if (i % 3 == 2 && n == 1) {
                return OpenAiTestServer.Reply.error(500, "overloaded");
            }
            return OpenAiTestServer.Reply.content(Long.toString(i * 2)).withUsage(18, 2);
        });
    }

    @AfterEach
    void tearDown() {
        llm.close();
        placements.close();
        fx.close();
    }

    private String httpProfile() {
        return """
                name: transcripts
                agent: {kind: http, url: "%s", model: test-model, max_attempts: 2, system_prompt: "Answer with a number.",
                        temperature: 0, max_tokens: 16}
                evaluators:
                  - {name: exact, kind: exact_match}
                  - {name: re, kind: regex, pattern: "^[0-9]+$", applies_to: {groups: [math]}}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                  - {name: math, required_evaluators: [exact, re], min_pass_rate: 0.5}
                """.formatted(llm.chatUrl());
    }

    public static Worker.Options fast(int concurrency) {
        return new Worker.Options(
                concurrency,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofSeconds(5));
    }

    /** The receipts the run's done chunk rows reference, read through their references. */
    public static List<Receipt> receipts(ExecFixture fx, Placements placements, UUID run) {
        List<Receipt> out = new ArrayList<>();
        placements
                .jdbi(ExecutionConfig.CONTROL)
                .useHandle(h -> h.createQuery("SELECT receipt_key, receipt_length, receipt_sha256 FROM exec_chunks"
                                + " WHERE run_id = :r AND state = 'done' ORDER BY chunk_index")
                        .bind("r", run)
                        .map((rs, ctx) -> new ObjectRef(
                                ObjectKey.of(rs.getString(1)), rs.getLong(2), Sha256.parseHex(rs.getString(3))))
                        .forEach(ref -> out.add(ReceiptParser.fromJson(
                                fx.store.read(ref, Deadline.after(Duration.ofSeconds(10))),
                                ref.key().value()))));
        return out;
    }

    /** The transcript's bytes, read through its reference, in a file named like a session log. */
    Path local(ObjectRef ref) throws IOException {
        Path f = Files.createTempDirectory(dir, "t").resolve("session.jsonl.zstd");
        Files.write(f, fx.store.read(ref, Deadline.after(Duration.ofSeconds(10))));
        return f;
    }

    /**
     * The transcript's bytes, read through its receipt reference (a whole object, or its slice of a transcript
     * container), in a file named like a session log: what the published reader judges.
     */
    Path local(Receipt.TranscriptRef t) throws IOException {
        return local(t.ref(), t.offset());
    }

    Path local(RunTranscripts.Attempt a) throws IOException {
        return local(a.transcript(), a.offset());
    }

    private Path local(ObjectRef ref, java.util.OptionalLong offset) throws IOException {
        Path f = Files.createTempDirectory(dir, "t").resolve("session.jsonl.zstd");
        Files.write(f, ChunkRows.readTranscript(fx.store, ref, offset, "transcript " + ref.key()));
        return f;
    }

    /** The committed events of a transcript file, as Vigilo's reader streams them. */
    static List<JsonNode> events(Path log) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        SessionCat.CatReport r = SessionCat.cat(log, 0, out);
        assertThat(r.report().accepted()).as(r.report().toText()).isTrue();
        List<JsonNode> events = new ArrayList<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            if (!line.isEmpty()) {
                events.add(JSON.readTree(line));
            }
        }
        return events;
    }

    static List<String> types(List<JsonNode> events) {
        return events.stream().map(e -> e.get("type").asText()).toList();
    }

    @Test
    void httpTranscriptsWithToolCallsAreAcceptedByThePublishedReader() throws Exception {
        UUID run = fx.prepare(httpProfile());
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, fast(4), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");

        List<Receipt> receipts = receipts(fx, placements, run);
        assertThat(receipts).isNotEmpty();
        List<Path> judged = new ArrayList<>();
        java.util.Set<ObjectKey> containers = new java.util.HashSet<>();
        List<Long> judgedOffsets = new ArrayList<>();
        int cases = 0;
        for (Receipt r : receipts) {
            for (Receipt.CaseResult c : r.cases()) {
                cases++;
                long i = c.ordinal();
                int expectedAttempts = i % 3 == 2 ? 2 : 1;
                assertThat(c.attempts()).isEqualTo(expectedAttempts);
                assertThat(c.transcripts()).hasSize(expectedAttempts);
                for (int a = 0; a < c.transcripts().size(); a++) {
                    Receipt.TranscriptRef t = c.transcripts().get(a);
                    assertThat(t.attempt()).isEqualTo(a + 1);
                    // A slice of one of the chunk's transcript containers under the receipt's generation.
                    assertThat(t.offset()).isPresent();
                    assertThat(TranscriptStore.isContainerKey(t.ref().key(), run, r.chunkIndex(), r.leaseGeneration()))
                            .as(t.ref().key().value())
                            .isTrue();
                    containers.add(t.ref().key());
                    Path log = local(t);
                    VerifyReport v = SessionVerifier.verify(log);
                    assertThat(v.accepted()).as(v.toText()).isTrue();
                    assertThat(v.maxEpoch()).isEqualTo(r.leaseGeneration());
                    List<JsonNode> ev = events(log);
                    List<String> types = types(ev);
                    assertThat(types.get(0)).isEqualTo("vigilo/case");
                    assertThat(ev.get(0).path("data").path("case_id").asText()).isEqualTo(c.id());
                    assertThat(types)
                            .containsSubsequence(
                                    "turn/start",
                                    "user/message",
                                    "step/start",
                                    "request/context",
                                    "request/header",
                                    "step/end",
                                    "vigilo/attempt",
                                    "turn/end");
                    JsonNode user = ev.get(types.indexOf("user/message"));
                    assertThat(user.at("/data/content/0/text").asText()).isEqualTo("what is " + i + " * 2");
                    // No messages template: the user message and the header's system are the turns sent.
                    assertThat(types).doesNotContain(AttemptTranscript.MESSAGES);
                    JsonNode header = ev.get(types.indexOf("request/header"));
                    assertThat(header.at("/data/header/system").asText()).isEqualTo("Answer with a number.");
                    assertThat(header.at("/data/header/config/model").asText()).isEqualTo("test-model");
                    assertThat(header.at("/data/header/config/maxTokens").asInt())
                            .isEqualTo(16);
                    JsonNode end = ev.get(types.lastIndexOf("turn/end"));
                    boolean last = a == c.transcripts().size() - 1;
                    if (!last) {
                        // the failed first attempt: the endpoint's answer and the error end the turn
                        assertThat(types).contains("vigilo/http-response").doesNotContain("assistant/message");
                        assertThat(end.at("/data/reason/kind").asText()).isEqualTo("error");
                        assertThat(end.at("/data/reason/error/code").asText()).isEqualTo("http_status");
                        assertThat(types).doesNotContain("vigilo/gates");
                        continue;
                    }
                    JsonNode message = ev.get(types.indexOf("assistant/message"));
                    // the model the endpoint says answered (the request asked for test-model)
                    assertThat(message.at("/data/message/source/model").asText())
                            .isEqualTo("test");
                    assertThat(message.at("/data/usage/outputTokens").asInt()).isEqualTo(i % 3 == 0 ? 7 : 2);
                    assertThat(end.at("/data/reason/kind").asText()).isEqualTo("completed");
                    JsonNode output = ev.get(types.indexOf("vigilo/output"));
                    assertThat(output.at("/data/sha256").asText())
                            .isEqualTo(c.outputSha256().orElseThrow().toHex());
                    assertThat(types.stream().filter("vigilo/evaluator"::equals).count())
                            .isEqualTo(c.evaluatorResults().size());
                    JsonNode gates = ev.get(types.indexOf("vigilo/gates"));
                    c.gates()
                            .forEach((g, o) -> assertThat(
                                            gates.at("/data/gates/" + g).asText())
                                    .isEqualTo(o.wire));
                    if (i % 3 == 0) {
                        JsonNode call = ev.get(types.indexOf("tool/call"));
                        assertThat(call.at("/data/name").asText()).isEqualTo("multiply");
                        assertThat(call.at("/data/arguments").asText()).isEqualTo("{\"a\":" + i + ",\"b\":2}");
                        assertThat(message.at("/data/message/content/0/type").asText())
                                .isEqualTo("tool-call");
                    } else {
                        assertThat(message.at("/data/message/content/0/text").asText())
                                .isEqualTo(Long.toString(i * 2));
                    }
                }
                if (i < 3) {
                    for (Receipt.TranscriptRef t : c.transcripts()) {
                        judged.add(local(t));
                        judgedOffsets.add(t.offset().orElseThrow());
                    }
                }
            }
        }
        assertThat(cases).isEqualTo(24);
        // 32 transcripts in a few containers per chunk (one per partial receipt link and one for the final receipt).
        assertThat(containers.size()).isBetween(receipts.size(), 31);

        // Found by case id, streamed as the committed events.
        RunTranscripts reader = new RunTranscripts(placements, fx.storage);
        RunTranscripts.CaseTranscripts found = reader.find(run, "case-17");
        assertThat(found.ordinal()).isEqualTo(17);
        assertThat(found.attempts()).extracting(RunTranscripts.Attempt::attempt).containsExactly(1, 2);
        assertThat(found.gates()).containsEntry("all", "passed");
        ByteArrayOutputStream jsonl = new ByteArrayOutputStream();
        VerifyReport streamed = reader.write(run, found.attempt(2).orElseThrow(), jsonl);
        assertThat(streamed.accepted()).isTrue();
        List<String> lines = List.of(jsonl.toString(StandardCharsets.UTF_8).split("\n"));
        assertThat(lines).hasSize(events(local(found.attempt(2).orElseThrow())).size());
        assertThat(JSON.readTree(lines.get(0)).at("/data/case_id").asText()).isEqualTo("case-17");
        // A case page finds the same transcripts by ordinal.
        try (CaseResults pages = new CaseResults(placements, fx.storage)) {
            assertThat(pages.find(run, 17).orElseThrow().transcripts()).isEqualTo(found.attempts());
        }
        // A viewer's page: from an event's sequence number on.
        long fourth = JSON.readTree(lines.get(3)).path("seq").asLong();
        ByteArrayOutputStream tail = new ByteArrayOutputStream();
        assertThat(reader.write(run, found.attempt(2).orElseThrow(), fourth, tail)
                        .accepted())
                .isTrue();
        assertThat(List.of(tail.toString(StandardCharsets.UTF_8).split("\n")))
                .containsExactlyElementsOf(lines.subList(3, lines.size()));
        assertThatThrownBy(() -> reader.find(run, "case-999"))
                .isInstanceOf(dev.vigilo.common.errors.NotFoundException.class)
                .hasMessageContaining("no case with id \"case-999\"");
        // The published reader accepts them, with the same event count as Vigilo's reader.
        assertThat(judged).hasSize(4);
        // Slices cut out of containers, not only a container's first transcript.
        assertThat(judgedOffsets).anyMatch(o -> o > 0);
        for (Path log : judged) {
            JsonNode verdict = Referee.get().judge(log);
            VerifyReport ours = SessionVerifier.verify(log);
            assertThat(verdict.path("verdict").asText()).as(verdict.toString()).isEqualTo("ACCEPT");
            assertThat(verdict.path("events").asLong()).isEqualTo(ours.events());
            assertThat(verdict.path("closers").asLong()).isZero();
        }
    }

    @Test
    void aRunWrittenWithOneObjectPerTranscriptStillReadsAndVerifies() throws Exception {
        // The path before transcript containers (receipt versions 2-7): each transcript its own object, referenced
        // without an offset. A build with containers reads, shows and verifies such a run as before.
        UUID run = fx.prepare(httpProfile());
        new Admission(placements, fx.storage).admit(run);
        System.setProperty(ChunkExecution.TRANSCRIPT_OBJECTS, "true");
        try {
            new Worker(placements, fx.storage, fast(2), Worker.Listener.NONE).run();
        } finally {
            System.clearProperty(ChunkExecution.TRANSCRIPT_OBJECTS);
        }
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        int transcripts = 0;
        for (Receipt r : receipts(fx, placements, run)) {
            assertThat(new String(ReceiptParser.toJson(r), StandardCharsets.UTF_8))
                    .contains("\"version\":4,");
            for (Receipt.CaseResult c : r.cases()) {
                for (int a = 0; a < c.transcripts().size(); a++) {
                    Receipt.TranscriptRef t = c.transcripts().get(a);
                    transcripts++;
                    assertThat(t.offset()).isEmpty();
                    assertThat(t.ref().key())
                            .isEqualTo(
                                    TranscriptStore.key(run, r.chunkIndex(), c.ordinal(), a + 1, r.leaseGeneration()));
                    assertThat(SessionVerifier.verify(local(t)).maxEpoch()).isEqualTo(r.leaseGeneration());
                }
            }
        }
        assertThat(transcripts).isEqualTo(24 + 8);
        RunTranscripts reader = new RunTranscripts(placements, fx.storage);
        RunTranscripts.CaseTranscripts found = reader.find(run, "case-17");
        assertThat(found.attempts()).allMatch(a -> a.offset().isEmpty());
        ByteArrayOutputStream jsonl = new ByteArrayOutputStream();
        assertThat(reader.write(run, found.attempt(2).orElseThrow(), jsonl).accepted())
                .isTrue();
        assertThat(jsonl.toString(StandardCharsets.UTF_8)).contains("\"case_id\":\"case-17\"");
        RunVerifier.Report report = new RunVerifier(placements, fx.storage).verify(run);
        assertThat(report.problem()).isEmpty();
        assertThat(report.checked().transcripts()).isEqualTo(24 + 8);
    }

    @Test
    void aByteFlippedInOneSliceOfAContainerIsReportedForThatTranscriptOnly() throws Exception {
        UUID run = fx.prepare(httpProfile());
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, fast(2), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        // A container holding several cases' slices; the case whose slice comes second in it.
        Map<ObjectKey, List<Map.Entry<Receipt.CaseResult, Receipt.TranscriptRef>>> byContainer =
                new java.util.TreeMap<>(java.util.Comparator.comparing(ObjectKey::value));
        for (Receipt r : receipts(fx, placements, run)) {
            for (Receipt.CaseResult c : r.cases()) {
                for (Receipt.TranscriptRef t : c.transcripts()) {
                    byContainer
                            .computeIfAbsent(t.ref().key(), k -> new ArrayList<>())
                            .add(Map.entry(c, t));
                }
            }
        }
        List<Map.Entry<Receipt.CaseResult, Receipt.TranscriptRef>> slices = byContainer.values().stream()
                .filter(l -> l.size() >= 2)
                .findFirst()
                .orElseThrow();
        slices.sort(
                java.util.Comparator.comparingLong(x -> x.getValue().offset().orElseThrow()));
        Receipt.TranscriptRef first = slices.get(0).getValue();
        Receipt.TranscriptRef second = slices.get(1).getValue();
        Receipt.CaseResult tampered = slices.get(1).getKey();
        long at = second.offset().orElseThrow() + second.ref().length() / 2;
        Path file = fx.storeRoot.resolve(second.ref().key().value());
        byte[] bytes = Files.readAllBytes(file);
        bytes[(int) at] ^= 0x01;
        Files.write(file, bytes);

        RunVerifier.Report report = new RunVerifier(placements, fx.storage).verify(run);
        assertThat(report.intact()).isFalse();
        assertThat(report.problem().orElseThrow())
                .contains("at offset " + second.offset().orElseThrow())
                .contains("case \"" + tampered.id() + "\"")
                .contains("altered");
        // The other slices of the same container still read and verify.
        assertThat(SessionVerifier.verify(local(first)).accepted()).isTrue();
        assertThatThrownBy(() -> local(second))
                .isInstanceOf(dev.vigilo.common.errors.DamagedException.class)
                .hasMessageContaining("SHA-256");
    }

    @Test
    void aCommandAgentsEventsBecomeTheFormatsEvents() throws Exception {
        Path agent = dir.resolve("agent.sh");
        Files.writeString(agent, """
                #!/bin/sh
                # Reads the case, narrates a tool-using answer through VIGILO_EVENTS, prints the output.
                input=$(cat)
                n=$(printf '%s' "$input" | sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
                {
                  echo '{"type":"reasoning","text":"I should multiply."}'
                  echo '{"type":"tool_call","id":"c1","name":"multiply","arguments":{"a":'"$n"',"b":2}}'
                  echo '{"type":"tool_result","id":"c1","content":"'"$((n * 2))"'"}'
                  echo '{"type":"message","text":"The answer is '"$((n * 2))"'","model":"tiny-1"}'
                  echo '{"type":"usage","input_tokens":11,"output_tokens":5}'
                  echo '{"type":"progress","percent":100}'
                  echo 'not json'
                } >> "$VIGILO_EVENTS"
                echo "$((n * 2))"
                """);
        Files.setPosixFilePermissions(agent, PosixFilePermissions.fromString("rwxr-xr-x"));
        UUID run = fx.prepare("""
                name: command-transcripts
                agent: {kind: command, command: ["%s"]}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 1.0}
                """.formatted(agent));
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, fast(2), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        Receipt r = receipts(fx, placements, run).get(0);
        Receipt.CaseResult c = r.cases().get(5);
        assertThat(c.gates()).containsEntry("all", Receipt.GateOutcome.PASSED);
        Path log = local(c.transcripts().get(0));
        List<JsonNode> ev = events(log);
        assertThat(types(ev))
                .containsExactly(
                        "vigilo/case",
                        "turn/start",
                        "user/message",
                        "step/start",
                        "assistant/message",
                        "tool/call",
                        "tool/result",
                        "step/end",
                        "step/start",
                        "vigilo/agent-event",
                        "assistant/message",
                        "step/end",
                        "vigilo/attempt",
                        "vigilo/output",
                        "turn/end",
                        "vigilo/evaluator",
                        "vigilo/gates");
        assertThat(ev.get(4).at("/data/message/content/0/type").asText()).isEqualTo("reasoning");
        assertThat(ev.get(4).at("/data/message/content/1/arguments").asText()).isEqualTo("{\"a\":5,\"b\":2}");
        assertThat(ev.get(4).at("/data/message/source/provider").asText()).isEqualTo("command");
        assertThat(ev.get(6).at("/data/message/content/0/content/0/text").asText())
                .isEqualTo("10");
        assertThat(ev.get(9).at("/data/event/percent").asInt()).isEqualTo(100);
        assertThat(ev.get(10).at("/data/message/content/0/text").asText()).isEqualTo("The answer is 10");
        assertThat(ev.get(10).at("/data/message/source/model").asText()).isEqualTo("tiny-1");
        assertThat(ev.get(10).at("/data/usage/inputTokens").asInt()).isEqualTo(11);
        assertThat(ev.get(13).at("/data/output").asText()).isEqualTo("10");
        JsonNode verdict = Referee.get().judge(log);
        assertThat(verdict.path("verdict").asText()).as(verdict.toString()).isEqualTo("ACCEPT");
        assertThat(verdict.path("events").asLong())
                .isEqualTo(SessionVerifier.verify(log).events());
    }

    @Test
    void aStaleWorkersTranscriptsAreFencedAndNeverCount() throws Exception {
        UUID run = fx.prepare(httpProfile());
        new Admission(placements, fx.storage).admit(run);
        var jdbi = placements.jdbi(ExecutionConfig.CONTROL);
        var routes = ShardRoutes.claimable(fx.control.jdbi()).get(ExecutionConfig.CONTROL);
        UUID staleOwner = UUID.randomUUID();
        UUID currentOwner = UUID.randomUUID();
        ChunkTables.Lease stale = jdbi.inTransaction(
                        h -> ChunkTables.claim(h, routes, staleOwner, Duration.ofSeconds(60)))
                .orElseThrow();
        // The stale worker stalls past its lease; another worker takes the chunk over with the next generation.
        jdbi.useHandle(h -> h.createUpdate("UPDATE exec_chunks SET lease_expires_at = now() - interval '1 second'"
                        + " WHERE run_id = :r AND chunk_index = :c")
                .bind("r", run)
                .bind("c", stale.chunkIndex())
                .execute());
        ChunkTables.Lease current = jdbi.inTransaction(
                        h -> ChunkTables.claim(h, routes, currentOwner, Duration.ofSeconds(60)))
                .orElseThrow();
        assertThat(current.generation()).isEqualTo(stale.generation() + 1);

        AgentEnvironment env = AgentEnvironment.system().withBackoff(Duration.ZERO, Duration.ZERO, Duration.ZERO);
        try (RunContexts contexts = new RunContexts(
                        placements,
                        fx.storage,
                        new OutageWaits(Worker.Options.OUTAGE_WAIT, Worker.Listener.NONE, () -> {}));
                ChunkExecution exec = new ChunkExecution(2, env)) {
            RunContext ctx = contexts.get(run, ExecutionConfig.CONTROL);
            Receipt mine = exec.execute(current, currentOwner, ctx);
            ObjectRef mineRef = fx.store.create(
                    Receipt.key(run, current.chunkIndex(), current.generation()),
                    ReceiptParser.toJson(mine),
                    Deadline.after(Duration.ofSeconds(10)));
            ChunkTables.Completion first =
                    jdbi.inTransaction(h -> ChunkTables.complete(h, current, mineRef, ChunkTables.Tallies.of(mine)));
            assertThat(first).isEqualTo(ChunkTables.Completion.COMPLETED);
            // The stale worker wakes up and executes the chunk too: its transcripts carry its own generation.
            Receipt late = exec.execute(stale, staleOwner, ctx);
            ObjectRef lateRef = fx.store.create(
                    Receipt.key(run, stale.chunkIndex(), stale.generation()),
                    ReceiptParser.toJson(late),
                    Deadline.after(Duration.ofSeconds(10)));
            ChunkTables.Completion second =
                    jdbi.inTransaction(h -> ChunkTables.complete(h, stale, lateRef, ChunkTables.Tallies.of(late)));
            assertThat(second).isEqualTo(ChunkTables.Completion.FENCED);

            // Only the current generation's receipt, and so only its transcripts, are referenced.
            Receipt counted = receipts(fx, placements, run).get(0);
            assertThat(counted.leaseGeneration()).isEqualTo(current.generation());
            List<ObjectKey> countedKeys = new ArrayList<>();
            counted.cases()
                    .forEach(c ->
                            c.transcripts().forEach(t -> countedKeys.add(t.ref().key())));
            assertThat(countedKeys).isNotEmpty();
            for (Receipt.CaseResult c : late.cases()) {
                for (Receipt.TranscriptRef t : c.transcripts()) {
                    assertThat(countedKeys).doesNotContain(t.ref().key());
                    assertThat(TranscriptStore.isContainerKey(
                                    t.ref().key(), run, stale.chunkIndex(), stale.generation()))
                            .isTrue();
                    assertThat(SessionVerifier.verify(local(t)).maxEpoch()).isEqualTo(stale.generation());
                }
            }
            Receipt.TranscriptRef currentFirst =
                    counted.cases().get(0).transcripts().get(0);
            assertThat(SessionVerifier.verify(local(currentFirst)).maxEpoch()).isEqualTo(current.generation());

            // A stale writer cannot replace the current generation's transcript: objects are create-only.
            TranscriptStore staleStore = new TranscriptStore();
            assertThatThrownBy(() -> staleStore.write(
                            fx.store,
                            currentFirst.ref().key(),
                            new SessionHeader("stale", null, 0, 0),
                            stale.generation(),
                            List.of(JSON.createObjectNode()
                                    .put("type", "vigilo/case")
                                    .put("ignorable", true)
                                    .set("data", JSON.createObjectNode()))))
                    .isInstanceOf(ObjectConflictException.class);
            assertThat(fx.store.readSlice(
                            currentFirst.ref(),
                            currentFirst.offset().orElseThrow(),
                            Deadline.after(Duration.ofSeconds(10))))
                    .hasSize((int) currentFirst.ref().length());
            // Nor extend it: the log's batches carry the current generation, and a writer under the stale one is
            // refused (the readers would skip its batch as stale-writer residue anyway).
            Path copy = local(currentFirst);
            assertThatThrownBy(() -> SessionLogWriter.open(
                            copy, EpochSource.fixed(new Epoch(stale.generation())), TranscriptStore.OPTIONS))
                    .isInstanceOf(FencedException.class);
        }
        // The run settles over the current generation's records, and verifies intact: the stale worker's receipt and
        // transcripts exist in the store but nothing counted references them.
        new Worker(placements, fx.storage, fast(2), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        RunVerifier.Report report = new RunVerifier(placements, fx.storage).verify(run);
        assertThat(report.problem()).isEmpty();
        assertThat(report.intact()).isTrue();
        assertThat(report.checked().transcripts()).isEqualTo(24 + 8); // cases i % 3 == 2 made two attempts
    }
}
