package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.luben.zstd.ZstdInputStream;
import dev.vigilo.agent.AgentEnvironment;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.common.errors.Secrets;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.view.RunResults;
import dev.vigilo.exec.view.RunTranscripts;
import dev.vigilo.exec.worker.TranscriptTest;
import dev.vigilo.exec.worker.Worker;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * No stored byte of a run holds its API key, though the agent, the endpoint and the evaluators give it back through
 * every path they have ({@link SecretLeaks}): a real worker with the key in its environment, an embedded control
 * database, a local store and a local OpenAI-compatible endpoint. Afterwards every file under the store (transcripts
 * decompressed), every row of every table of the control and execution databases, the log output of the whole
 * execution, and what {@code run results} and {@code run transcript --json} stream are searched for the key, its
 * JSON-escaped and URL-encoded spellings and every 12-character piece of it; the mask stands where the key was.
 */
class SecretMaskingTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer endpoint;
    String key;
    Path agent;
    Path evaluator;
    final Logs logs = new Logs();

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 6);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        endpoint = OpenAiTestServer.start();
        SecretLeaks.echoingEndpoint(endpoint);
        key = SecretLeaks.newKey();
        Path[] scripts = SecretLeaks.scripts(Files.createDirectories(dir.resolve("scripts")));
        agent = scripts[0];
        evaluator = scripts[1];
        logs.capture();
    }

    @AfterEach
    void tearDown() {
        logs.release();
        endpoint.close();
        placements.close();
        fx.close();
    }

    private UUID execute(String profile) {
        UUID run = fx.prepare(profile);
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, TranscriptTest.fast(2), Worker.Listener.NONE, SecretLeaks.environment(key))
                .run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        // What was recorded is the masked conversation, consistently: the run verifies intact.
        RunVerifier.Report report = new RunVerifier(placements, fx.storage).verify(run);
        assertThat(report.problem()).isEmpty();
        assertThat(report.intact()).isTrue();
        return run;
    }

    @Test
    void anHttpRunStoresTheMaskWhereTheEndpointAndTheEvaluatorGaveTheKeyBack() throws Exception {
        UUID run = execute(SecretLeaks.httpProfile(endpoint, evaluator));
        // The endpoint really did give it back: the requests carried it, every answer echoed it.
        assertThat(endpoint.requests())
                .allSatisfy(r -> assertThat(r.authorization()).isEqualTo("Bearer " + key));

        Map<String, String> stored = everyStoredText();
        assertNoPieceOfTheKey(stored);
        Map<Long, Receipt.CaseResult> cases = cases(run);
        // 401: the error message and the transcript's answer hold the mask.
        assertThat(cases.get(0L).error().orElseThrow().message()).contains("bad key Bearer ***");
        assertThat(transcriptEvents(stored, run, 0, 1)).contains("\"body\":{\"error\":\"bad key Bearer ***\"}");
        // 503 whose body is not JSON, then 200 whose content holds the key.
        assertThat(transcriptEvents(stored, run, 1, 1)).contains("upstream failed for Authorization: Bearer ***");
        assertThat(cases.get(1L).output()).contains("your key is ***");
        assertThat(transcriptEvents(stored, run, 1, 2)).contains("your key is ***");
        // The JSON-escaped spelling in a cut body, then the URL-encoded one in an error message.
        assertThat(transcriptEvents(stored, run, 2, 1)).contains("{\\\"echo\\\":\\\"***\\\"");
        assertThat(cases.get(2L).error().orElseThrow().message()).contains("invalid api_key=***&model");
        // A tool call's arguments: in the output and the transcript's tool/call.
        assertThat(cases.get(3L).output()).hasValueSatisfying(o -> assertThat(o).contains("api_key\\\":\\\"***"));
        // The command evaluator: the key instead of a score, or on stderr before it crashed.
        assertThat(evaluatorError(cases.get(4L))).contains("printed \"***\"");
        assertThat(evaluatorError(cases.get(1L))).contains("evaluator saw ***");
        assertThat(transcriptEvents(stored, run, 1, 2)).contains("evaluator saw ***");

        String results = streamed(out -> new RunResults(placements, fx.storage).write(run, out));
        assertThat(results).contains("bad key Bearer ***", "your key is ***");
        assertNoPieceOfTheKey(Map.of("run results", results));
        String transcript = transcriptJson(run, "case-0");
        assertThat(transcript).contains("bad key Bearer ***");
        assertNoPieceOfTheKey(Map.of("run transcript --json", transcript));
    }

    @Test
    void aCommandRunStoresTheMaskWhereTheAgentAndTheEvaluatorPrintedTheKey() throws Exception {
        UUID run = execute(SecretLeaks.commandProfile(agent, evaluator));

        Map<String, String> stored = everyStoredText();
        assertNoPieceOfTheKey(stored);
        Map<Long, Receipt.CaseResult> cases = cases(run);
        // stdout: the output, inline and stored apart.
        assertThat(cases.get(0L).output()).contains("answer ***");
        assertThat(cases.get(3L).output()).isEmpty();
        assertThat(cases.get(3L).outputRef()).isPresent();
        assertThat(stored.get(cases.get(3L).outputRef().orElseThrow().key().value()))
                .contains("a *** b");
        // stderr: in the errors of failed attempts, also when the kept tail starts inside the key.
        assertThat(cases.get(2L).error().orElseThrow().message()).contains("agent stderr holds ***");
        assertThat(transcriptEvents(stored, run, 1, 1)).contains("agent stderr holds ***");
        assertThat(cases.get(5L).error().orElseThrow().message()).contains("stderr ends: *** end");
        // events: a message, a tool call and its result, an unknown event's field name.
        String events = transcriptEvents(stored, run, 0, 1);
        assertThat(events)
                .contains(
                        "I will call the API with ***",
                        "{\\\"key\\\":\\\"***\\\"}",
                        "accepted ***",
                        "\"event\":{\"type\":\"custom\",\"***\":\"as a field name\"}");
        // the evaluator, as for an http agent
        assertThat(evaluatorError(cases.get(0L))).contains("printed \"***\"");
        assertThat(evaluatorError(cases.get(1L))).contains("evaluator saw ***");

        String results = streamed(out -> new RunResults(placements, fx.storage).write(run, out));
        assertThat(results).contains("answer ***");
        assertNoPieceOfTheKey(Map.of("run results", results));
        String transcript = transcriptJson(run, "case-0");
        assertThat(transcript).contains("I will call the API with ***");
        assertNoPieceOfTheKey(Map.of("run transcript --json", transcript));
    }

    @Test
    void aCommandAgentPrintingTheDatabaseCredentialsItInheritedStoresTheMask() throws Exception {
        // The worker's control database URL carries a password (trust authentication ignores it); agents inherit
        // the variable the URL came from, as a worker started with VIGILO_CONTROL_DB would pass it on.
        key = SecretLeaks.newKey();
        String url = fx.controlUrl + (fx.controlUrl.contains("?") ? "&" : "?") + "password=" + key;
        Path printer = dir.resolve("scripts/print-db.sh");
        Files.writeString(printer, "#!/bin/sh\ncat >/dev/null\necho \"connected to $VIGILO_CONTROL_DB\"\n");
        printer.toFile().setExecutable(true);
        Map<String, String> variables = new HashMap<>(System.getenv());
        variables.put("VIGILO_CONTROL_DB", url);
        AgentEnvironment environment = AgentEnvironment.system()
                .withVariables(variables)
                .withBackoff(Duration.ZERO, Duration.ZERO, Duration.ZERO);
        try (ControlDatabase withPassword = ControlDatabase.open(new ControlSettings.Jdbc(url));
                Placements inherited = Placements.open(withPassword, ExecutionConfig.defaults())) {
            UUID run = fx.prepare("""
                    name: db-printer
                    agent: {kind: command, command: ["%s"]}
                    evaluators: [{name: exact, kind: exact_match}]
                    gates: [{name: all, required_evaluators: [exact], min_pass_rate: 0.1}]
                    """.formatted(printer));
            new Admission(inherited, fx.storage).admit(run);
            new Worker(inherited, fx.storage, TranscriptTest.fast(2), Worker.Listener.NONE, environment).run();
            assertThat(fx.runStatus(run)).isEqualTo("settled");
            Map<String, String> stored = everyStoredText();
            assertNoPieceOfTheKey(stored);
            assertThat(transcriptEvents(stored, run, 0, 1)).contains("password=***");
        }
    }

    /** Neither the key, nor its JSON-escaped or URL-encoded spelling, nor any 12 characters of it. */
    private void assertNoPieceOfTheKey(Map<String, String> texts) {
        assertThat(texts).isNotEmpty();
        List<String> pieces = new ArrayList<>(List.of(SecretLeaks.jsonEscaped(key), SecretLeaks.urlEncoded(key)));
        for (int i = 0; i + 12 <= key.length(); i++) {
            pieces.add(key.substring(i, i + 12));
        }
        texts.forEach((where, text) -> {
            for (String piece : pieces) {
                assertThat(text).as("%s holds \"%s\"", where, piece).doesNotContain(piece);
            }
        });
        assertThat(String.join("\n", texts.values())).contains(Secrets.MASK);
    }

    /**
     * Everything the run stored, as text: every file under the store (zstd frames decompressed), every row of every
     * table of the control database (the execution database is its schema vigilo_exec), and the log output.
     */
    private Map<String, String> everyStoredText() throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        try (Stream<Path> files = Files.walk(fx.storeRoot)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                byte[] bytes = Files.readAllBytes(f);
                out.put(fx.storeRoot.relativize(f).toString(), new String(decompressed(bytes), StandardCharsets.UTF_8));
            }
        }
        fx.control.jdbi().useHandle(h -> {
            List<String> tables = h.createQuery("SELECT quote_ident(table_schema) || '.' || quote_ident(table_name)"
                            + " FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
                            + " AND table_schema NOT IN ('pg_catalog', 'information_schema')")
                    .mapTo(String.class)
                    .list();
            assertThat(tables).contains("vigilo_exec.exec_chunks", "public.runs");
            for (String t : tables) {
                List<String> rows = h.createQuery("SELECT t::text FROM " + t + " t")
                        .mapTo(String.class)
                        .list();
                out.put("table " + t, String.join("\n", rows));
            }
        });
        assertThat(logs.text()).as("the log capture works").isNotEmpty();
        out.put("log output", logs.text());
        return out;
    }

    /** The bytes, with each zstd frame they start with decompressed (a transcript is a sequence of frames). */
    private static byte[] decompressed(byte[] bytes) throws IOException {
        boolean zstd = bytes.length >= 4
                && (bytes[0] & 0xff) == 0x28
                && (bytes[1] & 0xff) == 0xb5
                && (bytes[2] & 0xff) == 0x2f
                && (bytes[3] & 0xff) == 0xfd;
        if (!zstd) {
            return bytes;
        }
        try (InputStream in = new ZstdInputStream(new ByteArrayInputStream(bytes))) {
            return in.readAllBytes();
        }
    }

    private Map<Long, Receipt.CaseResult> cases(UUID run) {
        Map<Long, Receipt.CaseResult> out = new LinkedHashMap<>();
        for (Receipt r : TranscriptTest.receipts(fx, placements, run)) {
            for (Receipt.CaseResult c : r.cases()) {
                out.put(c.ordinal(), c);
            }
        }
        assertThat(out).hasSize(6);
        return out;
    }

    private static String evaluatorError(Receipt.CaseResult c) {
        return c.evaluatorResults().stream()
                .filter(e -> e.name().equals("leaky"))
                .findFirst()
                .orElseThrow()
                .error()
                .orElseThrow()
                .message();
    }

    /**
     * The decompressed transcript of attempt {@code attempt} of case {@code ordinal}: its lines in the chunk's
     * transcript containers (several transcripts back to back, each from its session header on).
     */
    private String transcriptEvents(Map<String, String> stored, UUID run, long ordinal, int attempt) {
        String prefix = "runs/" + run + "/transcripts/0000000000/g";
        String id = "-chunk-0-case-" + ordinal + "-a" + attempt + "-g";
        for (Map.Entry<String, String> e : stored.entrySet()) {
            if (!e.getKey().startsWith(prefix)) {
                continue;
            }
            StringBuilder out = null;
            for (String line : e.getValue().split("\n")) {
                boolean header = line.startsWith("{\"type\":\"session\"");
                if (header && out != null) {
                    break; // the next transcript
                }
                if (header && line.contains(id)) {
                    out = new StringBuilder();
                }
                if (out != null) {
                    out.append(line).append('\n');
                }
            }
            if (out != null) {
                return out.toString();
            }
        }
        throw new AssertionError("no transcript " + id + " in the containers among " + stored.keySet());
    }

    private String transcriptJson(UUID run, String caseId) {
        RunTranscripts reader = new RunTranscripts(placements, fx.storage);
        RunTranscripts.CaseTranscripts found = reader.find(run, caseId);
        return streamed(out -> {
            for (RunTranscripts.Attempt a : found.attempts()) {
                assertThat(reader.write(run, a, out).accepted()).isTrue();
            }
        });
    }

    private interface Writing {
        void to(ByteArrayOutputStream out) throws Exception;
    }

    private static String streamed(Writing w) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            w.to(out);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        String text = out.toString(StandardCharsets.UTF_8);
        for (String line : text.split("\n")) {
            if (!line.isBlank()) {
                try {
                    JSON.readTree(line);
                } catch (IOException e) {
                    throw new AssertionError("not a JSON line: " + line, e);
                }
            }
        }
        return text;
    }

    /** Every log event of the process at DEBUG and above while a test runs, formatted with its arguments. */
    static final class Logs extends AppenderBase<ILoggingEvent> {
        private final ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();
        private Level rootLevel;

        void capture() {
            Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
            setContext((LoggerContext) LoggerFactory.getILoggerFactory());
            rootLevel = root.getLevel();
            root.setLevel(Level.DEBUG);
            root.addAppender(this);
            start();
        }

        @Override
        protected void append(ILoggingEvent e) {
            StringBuilder b = new StringBuilder(e.getLevel() + " " + e.getLoggerName() + " " + e.getFormattedMessage());
            if (e.getThrowableProxy() != null) {
                b.append(' ').append(e.getThrowableProxy().getMessage());
            }
            lines.add(b.toString());
        }

        void release() {
            Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
            root.detachAppender(this);
            root.setLevel(rootLevel);
            stop();
        }

        String text() {
            return String.join("\n", lines);
        }
    }
}
