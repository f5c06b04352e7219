package dev.vigilo.web;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.datagen.DatagenProgress;
import dev.vigilo.datagen.PipelineParser;
import dev.vigilo.datagen.PipelineRunner;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.sessionlog.LockFileEpochSource;
import dev.vigilo.sessionlog.SessionHeader;
import dev.vigilo.sessionlog.SessionLogWriter;
import dev.vigilo.sessionlog.WriterOptions;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * What {@code vigilo quickstart} leaves behind, built with the modules' own APIs in a fresh control database and a
 * temporary Vigilo home: the example dataset, a run of the example profile executed by a real worker (the profile's
 * command agent) and settled, a second run admitted but not executed (pending, live), a datagen experiment with a
 * completed, a filtered and a failed item, and a session log with one turn, a tool call and a torn tail.
 */
final class QuickstartState implements AutoCloseable {
    final Path home;
    final ControlDatabase control;
    final Placements placements;
    final StorageConfig storage;
    final ObjectStore store;
    final DatasetEntry dataset;
    final UUID settledRun;
    /** The {@link ExtraRun}s' runs, in the order given: executed and settled by the same worker as the settled run. */
    final List<UUID> extraRuns;

    final UUID pendingRun;
    final Path sessionLog;
    final LogRoot datagenRoot;

    QuickstartState(Path home) throws IOException {
        this(home, Worker.Listener.NONE);
    }

    /** As above, the worker reporting to {@code listener}. */
    QuickstartState(Path home, Worker.Listener listener) throws IOException {
        this(home, listener, List.of());
    }

    /** As above, with more runs of the example dataset executed beside the settled run. */
    QuickstartState(Path home, Worker.Listener listener, List<ExtraRun> extras) throws IOException {
        this.home = home;
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
        placements = Placements.open(control, ExecutionConfig.defaults());
        storage = StorageConfig.localDefault(home.resolve("objects"));
        store = ObjectStores.open(storage.defaultStore());
        Path cases = home.resolve("quickstart.jsonl");
        Files.write(cases, resource("examples/quickstart.jsonl"));
        dataset = new DatasetCatalog(control.jdbi())
                .upload(
                        new UploadRequest(cases, Optional.of("quickstart-example"), Optional.of(UUID.randomUUID())),
                        store,
                        UploadProgress.NONE);
        String profile = new String(resource("examples/quickstart-profile.yaml"), StandardCharsets.UTF_8);
        settledRun = prepare(profile, Optional.empty());
        extraRuns = extras.stream().map(e -> prepare(e.profile(), e.label())).toList();
        Worker.Options fast = new Worker.Options(
                2,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofSeconds(5));
        // The profile names its agent by a path relative to the repository root: the worker runs agents in the home,
        // where the example agent is copied, whatever directory the tests run in.
        Path agent = home.resolve("examples/agent/QuickAgent.java");
        Files.createDirectories(agent.getParent());
        Files.write(agent, resource("examples/agent/QuickAgent.java"));
        new Worker(placements, storage, fast, listener, home).run();
        pendingRun = prepare(profile, Optional.empty());
        sessionLog = writeSessionLog(home.resolve("sessions/demo/session.jsonl.zstd"));
        datagenRoot = LogRoot.local(home);
        runDatagen(home.resolve("datagen"));
    }

    /** A run of the example dataset with its own profile text and {@code run create --label}. */
    record ExtraRun(String profile, Optional<String> label) {}

    private UUID prepare(String profile, Optional<String> label) {
        UUID run = UUID.randomUUID();
        new RunPreparation(control.jdbi(), storage)
                .create(new CreateRequest(
                        ProfileInput.inline(profile),
                        dataset.uploadId(),
                        Optional.of(run),
                        false,
                        CreateRequest.CONTROL_PLACEMENT,
                        label));
        new Admission(placements, storage).admit(run);
        return run;
    }

    static byte[] resource(String name) throws IOException {
        try (InputStream in = QuickstartState.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is missing from the test classpath");
            }
            return in.readAllBytes();
        }
    }

    DashboardSources sources() {
        return DashboardSources.all(
                control.jdbi(), placements, storage, Optional.of(datagenRoot), List.of(sessionLog), List.of(home));
    }

    /** A session log: one turn with two steps, reasoning, a tool call and its result, then a torn final frame. */
    static Path writeSessionLog(Path log) throws IOException {
        Files.createDirectories(log.getParent());
        JsonNodeFactory f = JsonNodeFactory.instance;
        SessionHeader header = new SessionHeader("demo-session", "/home/user/project", 1_760_000_000_000L, 0);
        try (SessionLogWriter w =
                SessionLogWriter.create(log, header, new LockFileEpochSource(), WriterOptions.defaults())) {
            ObjectNode turn = event(f, "turn/start", 1_760_000_000_100L);
            turn.putObject("data").put("turn", 1);
            ObjectNode user = event(f, "user/message", 1_760_000_000_200L).put("surfaceOp", "append");
            ObjectNode ud = user.putObject("data").put("id", "msg-u-1").put("role", "user");
            ud.putObject("source").put("kind", "user");
            ud.putArray("content").addObject().put("type", "text").put("text", "What is 17 + 25? Check with a tool.");
            ObjectNode step = event(f, "step/start", 1_760_000_000_300L);
            step.putObject("data").put("turn", 1).put("step", 1);
            w.append(List.of(turn, user, step));

            ObjectNode asst = event(f, "assistant/message", 1_760_000_001_300L).put("surfaceOp", "append");
            ObjectNode ad = asst.putObject("data").put("turn", 1).put("step", 1);
            ObjectNode msg = ad.putObject("message").put("id", "msg-a-1-1").put("role", "assistant");
            msg.putObject("source").put("kind", "model").put("provider", "test").put("model", "quick-agent");
            var content = msg.putArray("content");
            content.addObject().put("type", "reasoning").put("text", "I should add the numbers with the calculator.");
            content.addObject().put("type", "text").put("text", "Let me compute that.");
            content.addObject()
                    .put("type", "tool-call")
                    .put("id", "call_1")
                    .put("name", "calculator")
                    .put("arguments", "{\"expression\":\"17 + 25\"}");
            ad.putObject("usage").put("inputTokens", 120).put("outputTokens", 30);
            ObjectNode call = event(f, "tool/call", 1_760_000_001_400L);
            call.putObject("data")
                    .put("turn", 1)
                    .put("step", 1)
                    .put("callId", "call_1")
                    .put("name", "calculator")
                    .put("arguments", "{\"expression\":\"17 + 25\"}");
            w.append(List.of(asst, call));
            long callSeq = w.highWatermark().lastSeq();

            ObjectNode result = event(f, "tool/result", 1_760_000_001_900L).put("surfaceOp", "append");
            result.putArray("sourceEventSeqs").add(callSeq);
            ObjectNode rm =
                    result.putObject("data").put("turn", 1).put("step", 1).putObject("message");
            rm.put("id", "msg-t-call_1").put("role", "user");
            rm.putObject("source").put("kind", "tool").put("callId", "call_1");
            ObjectNode tr = rm.putArray("content")
                    .addObject()
                    .put("type", "tool-result")
                    .put("toolCallId", "call_1");
            tr.putArray("content").addObject().put("type", "text").put("text", "42");
            ObjectNode stepEnd = event(f, "step/end", 1_760_000_002_000L);
            stepEnd.putObject("data").put("turn", 1).put("step", 1);
            ObjectNode step2 = event(f, "step/start", 1_760_000_002_100L);
            step2.putObject("data").put("turn", 1).put("step", 2);
            ObjectNode answer =
                    event(f, "assistant/message", 1_760_000_002_900L).put("surfaceOp", "append");
            ObjectNode ad2 = answer.putObject("data").put("turn", 1).put("step", 2);
            ObjectNode m2 = ad2.putObject("message").put("id", "msg-a-1-2").put("role", "assistant");
            m2.putObject("source").put("kind", "model").put("provider", "test").put("model", "quick-agent");
            m2.putArray("content").addObject().put("type", "text").put("text", "17 + 25 = 42.");
            ObjectNode stepEnd2 = event(f, "step/end", 1_760_000_003_000L);
            stepEnd2.putObject("data").put("turn", 1).put("step", 2);
            ObjectNode turnEnd = event(f, "turn/end", 1_760_000_003_100L);
            turnEnd.putObject("data").put("turn", 1).putObject("reason").put("kind", "completed");
            w.append(List.of(result, stepEnd, step2, answer, stepEnd2, turnEnd));
        }
        // A torn final frame: a zstd frame header and a block that ends before its declared size (a writer that
        // died mid-append). Readers drop it; the viewer marks it.
        byte[] torn = {0x28, (byte) 0xB5, 0x2F, (byte) 0xFD, 0x04, 0x58, 0x21, 0x03, 0x00, 'x', 'y', 'z'};
        Files.write(log, torn, StandardOpenOption.APPEND);
        return log;
    }

    private static ObjectNode event(JsonNodeFactory f, String type, long time) {
        return f.objectNode().put("type", type).put("time", time);
    }

    /** A pipeline whose three seeds end completed, filtered and failed (with a traceback). */
    private void runDatagen(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("seeds.jsonl"), """
                {"id": "alpha", "topic": "arithmetic", "keep": true}
                {"id": "beta", "topic": "geography", "keep": false}
                {"id": "gamma", "topic": "broken", "keep": true}
                """);
        Path yaml = dir.resolve("quiz.yaml");
        Files.writeString(yaml, """
                name: quiz
                input: seeds.jsonl
                id_field: id
                steps:
                  - name: draft
                    kind: template
                    template: "Write a question about {{topic}}"
                    output_field: prompt
                  - name: keep
                    kind: filter
                    keep_if: {field: keep}
                  - name: answer
                    kind: command
                    retries: 1
                    command: |
                      if [ "$VIGILO_ITEM_ID" = gamma ]; then echo "cannot answer $VIGILO_ITEM_ID" >&2; exit 3; fi
                      echo '{"answer": "42"}'
                """);
        PipelineRunner.run(
                PipelineParser.parse(yaml), new PipelineRunner.Options(datagenRoot, "demo", 2, DatagenProgress.NONE));
    }

    @Override
    public void close() {
        store.close();
        placements.close();
        control.close();
    }
}
