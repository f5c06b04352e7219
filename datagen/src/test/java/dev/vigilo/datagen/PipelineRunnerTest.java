package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.LogLocation;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.checkpoint.Maintenance;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real pipelines over real Lance logs: every step kind, an OpenAI-compatible server, failures,
 * status, export.
 */
class PipelineRunnerTest {
    @TempDir
    static Path dir;

    static HttpServer server;
    static final AtomicInteger calls = new AtomicInteger();

    @BeforeAll
    static void startServer() {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
        server.createContext("/v1/chat/completions", ex -> {
            calls.incrementAndGet();
            JsonNode req = Json.MAPPER.readTree(ex.getRequestBody());
            String prompt = req.path("messages").path(0).path("content").asText();
            ObjectNode resp = Json.MAPPER.createObjectNode();
            resp.putArray("choices")
                    .addObject()
                    .putObject("message")
                    .put("role", "assistant")
                    .put("content", req.path("model").asText() + ":" + prompt.toUpperCase());
            byte[] b = Json.canonical(resp).getBytes(StandardCharsets.UTF_8);
            ex.getResponseHeaders().add("Content-Type", "application/json");
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        server.start();
    }

    @AfterAll
    static void stop() {
        server.stop(0);
    }

    static ExperimentStatus run(Path yaml, String experiment, DatagenProgress progress) {
        return PipelineRunner.run(
                PipelineParser.parse(yaml),
                new PipelineRunner.Options(LogRoot.local(dir.resolve("root")), experiment, 2, progress));
    }

    @Test
    void runsEveryStepKindAndExportsCompletedLeaves() throws Exception {
        Files.writeString(dir.resolve("seeds.jsonl"), """
        {"id": "a", "topic": "cats", "keep": true}
        {"id": "b", "topic": "dogs", "keep": false}
        {"id": "c", "topic": "owls", "keep": true}
        """);
        Path yaml = dir.resolve("kinds.yaml");
        Files.writeString(yaml, """
        name: kinds
        input: seeds.jsonl
        id_field: id
        steps:
          - {name: greet, kind: template, template: "about {{topic}}", output_field: prompt}
          - {name: ask, kind: http, url: "http://127.0.0.1:%d/v1/chat/completions", model: tiny, prompt: "{{prompt}}", output_field: answer}
          - {name: keep, kind: filter, keep_if: {field: keep}}
          - name: split
            kind: command
            command: ["sh", "-c", "cat > /dev/null; echo '{\\"parts\\": [1, 2]}'"]
          - {name: fan, kind: expand, field: parts, as: part}
          - name: refine
            kind: loop
            max_iterations: 5
            until: {field: n, equals: 3}
            body:
              name: bump
              kind: command
              command: |
                n=$(sed -n 's/.*"n":\\([0-9]*\\).*/\\1/p'); echo "{\\"n\\": $(( ${n:-0} + 1 ))}"
        """.formatted(server.getAddress().getPort()));
        RecordingProgress progress = new RecordingProgress();
        ExperimentStatus s = run(yaml, "e1", progress);
        assertThat(s.items()).isEqualTo(7); // a, b, c, a.0, a.1, c.0, c.1
        assertThat(s.completed()).isEqualTo(6);
        assertThat(s.filtered()).isEqualTo(1);
        assertThat(s.failed()).isZero();
        assertThat(s.running()).isZero();
        assertThat(s.progress()).isEqualTo(1.0);
        // Progress: the start, then each item once as it finishes, counting up; all on this thread.
        assertThat(progress.calls.get(0))
                .isEqualTo(new RecordingProgress.Call(null, null, 0, 0, 3, Thread.currentThread()));
        assertThat(progress.calls).extracting(RecordingProgress.Call::thread).containsOnly(Thread.currentThread());
        assertThat(progress.finishedItems())
                .extracting(RecordingProgress.Call::itemId)
                .containsExactlyInAnyOrder("a", "b", "c", "a.0", "a.1", "c.0", "c.1");
        assertThat(progress.finishedItems())
                .extracting(RecordingProgress.Call::finished)
                .containsExactly(1, 2, 3, 4, 5, 6, 7);
        assertThat(progress.finishedItems())
                .filteredOn(c -> c.itemId().equals("b"))
                .extracting(RecordingProgress.Call::status)
                .containsExactly(ItemStatus.FILTERED);
        assertThat(progress.finishedItems().get(6).items()).isEqualTo(7);

        ObjectNode item = Experiments.item(LogRoot.local(dir.resolve("root")), "kinds", "e1", "a")
                .orElseThrow();
        assertThat(item.path("fields").path("answer").asText()).isEqualTo("tiny:ABOUT CATS");
        assertThat(item.path("children")).hasSize(2);
        JsonNode child = item.path("children").path(0);
        assertThat(child.path("item_id").asText()).isEqualTo("a.0");
        assertThat(child.path("fields").path("n").asInt()).isEqualTo(3);
        assertThat(child.path("fields").path("part").asInt()).isEqualTo(1);
        assertThat(child.path("completed_steps"))
                .extracting(n -> n.path("step").asText())
                .containsExactly("bump", "bump", "bump", "refine");

        Path out = dir.resolve("out.jsonl");
        assertThat(Experiments.export(LogRoot.local(dir.resolve("root")), "kinds", "e1", out))
                .isEqualTo(4);
        List<String> lines = Files.readAllLines(out);
        assertThat(lines)
                .extracting(l -> Json.parse(l).path("id").asText())
                .containsExactly("a.0", "a.1", "c.0", "c.1");
        assertThat(Json.parse(lines.get(0)).path("input").path("topic").asText())
                .isEqualTo("cats");

        // A second run finds nothing to do: no step re-runs, no event is added.
        int before = calls.get();
        long events;
        try (CheckpointLog log = CheckpointLog.open(new LogLocation(dir.resolve("root"), "kinds", "e1"));
                var r = log.reader()) {
            events = r.allEvents().size();
        }
        RecordingProgress resumed = new RecordingProgress();
        ExperimentStatus again = run(yaml, "e1", resumed);
        // The same counts; the process list names the new run's holder.
        assertThat(again).usingRecursiveComparison().ignoringFields("processes").isEqualTo(s);
        assertThat(again.processes()).singleElement().satisfies(p -> {
            assertThat(p.writer()).isEqualTo("runner");
            assertThat(p.itemsFinished()).isEqualTo(7);
            assertThat(p.live()).isFalse();
            assertThat(p.buckets()).isEmpty();
        });
        assertThat(resumed.calls)
                .containsExactly(new RecordingProgress.Call(null, null, 7, 0, 7, Thread.currentThread()));
        assertThat(calls.get()).isEqualTo(before);
        try (CheckpointLog log = CheckpointLog.open(new LogLocation(dir.resolve("root"), "kinds", "e1"));
                var r = log.reader()) {
            assertThat(r.allEvents()).hasSize((int) events);
        }

        // Each run ended with the elected maintenance pass: the item_id index exists. While another
        // worker holds the
        // role, a run's pass is skipped.
        LogLocation loc = new LogLocation(dir.resolve("root"), "kinds", "e1");
        try (var alloc = new org.apache.arrow.memory.RootAllocator();
                org.lance.Dataset ds =
                        org.lance.Dataset.open().allocator(alloc).uri(loc.uri()).build()) {
            assertThat(ds.listIndexes()).contains(Maintenance.ITEM_INDEX);
        }
        try (CheckpointLog log = CheckpointLog.open(loc);
                Maintenance held = log.tryElectMaintenance().orElseThrow()) {
            assertThat(EndOfRunMaintenance.run(log)).isFalse();
        }
    }

    @Test
    void failingCommandsAreRecordedRetriedAndDoNotStopOtherItems() throws Exception {
        Files.writeString(dir.resolve("fail-seeds.jsonl"), """
        {"id": "ok", "mode": "good"}
        {"id": "exit", "mode": "exit"}
        {"id": "junk", "mode": "junk"}
        """);
        Path yaml = dir.resolve("fail.yaml");
        Files.writeString(yaml, """
        name: failing
        input: fail-seeds.jsonl
        id_field: id
        steps:
          - name: work
            kind: command
            retries: 1
            command: |
              case "$VIGILO_ITEM_ID" in
                exit) echo "boom on attempt $VIGILO_ATTEMPT" >&2; exit 3 ;;
                junk) echo "not json" ;;
                *) echo '{"done": true}' ;;
              esac
        """);
        RecordingProgress progress = new RecordingProgress();
        ExperimentStatus s = run(yaml, "f1", progress);
        assertThat(s.items()).isEqualTo(3);
        assertThat(s.completed()).isEqualTo(1);
        assertThat(s.failed()).isEqualTo(2);
        assertThat(s.failuresByType()).containsEntry("CommandExitError", 2L).containsEntry("InvalidJsonOutput", 2L);
        com.fasterxml.jackson.databind.node.ObjectNode json =
                (com.fasterxml.jackson.databind.node.ObjectNode) Json.parse(s.toJson());
        assertThat(json.remove("processes")).hasSize(1);
        assertThat(json)
                .isEqualTo(Json.parse(
                        "{\"pipeline\":\"failing\",\"experiment\":\"f1\",\"items\":3,\"completed\":1,\"filtered\":0,\"failed\":2,"
                                + "\"running\":0,\"progress\":1.0,\"failures_by_type\":{\"CommandExitError\":2,\"InvalidJsonOutput\":2},"
                                + "\"usage\":{\"cached\":0,\"completion_tokens\":0,\"cost\":null,\"prompt_tokens\":0,\"requests\":0,"
                                + "\"retries\":0},\"usage_by_step\":{},\"filtered_by_step\":{}}"));
        assertThat(progress.finishedItems())
                .extracting(RecordingProgress.Call::itemId, RecordingProgress.Call::status)
                .containsExactlyInAnyOrder(
                        tuple("ok", ItemStatus.COMPLETED),
                        tuple("exit", ItemStatus.FAILED),
                        tuple("junk", ItemStatus.FAILED));
        assertThat(progress.finishedItems().get(2).failed()).isEqualTo(2);
        JsonNode exit = Experiments.item(LogRoot.local(dir.resolve("root")), "failing", "f1", "exit")
                .orElseThrow();
        assertThat(exit.path("status").asText()).isEqualTo("failed");
        assertThat(exit.path("failures")).hasSize(2);
        assertThat(exit.path("failures").path(0).path("attempt").asInt()).isEqualTo(1);
        assertThat(exit.path("failures").path(1).path("attempt").asInt()).isEqualTo(2);
        assertThat(exit.path("failures").path(1).path("traceback").asText()).contains("boom on attempt 2");
        assertThat(exit.path("failures").path(1).path("final_attempt").asBoolean())
                .isTrue();
        // Listings: the experiment is found under the root, and its items page by status.
        LogRoot root = LogRoot.local(dir.resolve("root"));
        assertThat(Experiments.list(root)).contains(new Experiments.ExperimentRef("failing", "f1"));
        Experiments.ItemPage failed = Experiments.items(
                root, "failing", "f1", java.util.Optional.of(ItemStatus.FAILED), java.util.Optional.empty(), 1);
        assertThat(failed.items())
                .extracting(Experiments.ItemSummary::itemId, Experiments.ItemSummary::lastErrorType)
                .containsExactly(tuple("exit", java.util.Optional.of("CommandExitError")));
        assertThat(failed.next()).contains("exit");
        Experiments.ItemPage rest =
                Experiments.items(root, "failing", "f1", java.util.Optional.of(ItemStatus.FAILED), failed.next(), 1);
        assertThat(rest.items())
                .extracting(Experiments.ItemSummary::itemId, Experiments.ItemSummary::failures)
                .containsExactly(tuple("junk", 2));
        assertThat(rest.next()).isEmpty();
        Experiments.ItemPage all =
                Experiments.items(root, "failing", "f1", java.util.Optional.empty(), java.util.Optional.empty(), 10);
        assertThat(all.items())
                .extracting(Experiments.ItemSummary::itemId, Experiments.ItemSummary::status)
                .containsExactly(
                        tuple("exit", ItemStatus.FAILED),
                        tuple("junk", ItemStatus.FAILED),
                        tuple("ok", ItemStatus.COMPLETED));
        assertThat(all.items().get(2).completedSteps()).isEqualTo(1);
        assertThat(all.items().get(2).lastStep()).contains("work");
        assertThat(Experiments.list(LogRoot.local(dir.resolve("nothing-here")))).isEmpty();
        // A failed item is not retried by a later run.
        RecordingProgress resumed = new RecordingProgress();
        assertThat(run(yaml, "f1", resumed).failuresByType()).isEqualTo(s.failuresByType());
        assertThat(resumed.calls)
                .containsExactly(new RecordingProgress.Call(null, null, 3, 2, 3, Thread.currentThread()));
    }

    @Test
    void invalidSeedInputChangesNothing() throws Exception {
        Files.writeString(dir.resolve("bad-seeds.jsonl"), "{\"id\": \"x\"}\n{\"id\": \n");
        Path yaml = dir.resolve("bad.yaml");
        Files.writeString(
                yaml,
                "name: bad\ninput: bad-seeds.jsonl\nid_field: id\nsteps:\n  - {name: t, kind: template, template: a, output_field: b}\n");
        assertThatThrownBy(() -> run(yaml, "b1", DatagenProgress.NONE))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessageContaining("bad-seeds.jsonl:2:");
        assertThat(CheckpointLog.exists(new LogLocation(dir.resolve("root"), "bad", "b1")))
                .isFalse();
    }
}
