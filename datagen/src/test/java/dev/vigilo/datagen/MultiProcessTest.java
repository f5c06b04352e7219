package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.crash.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three real `datagen run` processes on one experiment, two of them killed with SIGKILL at random points: the third
 * finishes every item (taking over the killed ones' buckets after recovering their writers), each item's steps are
 * completed exactly once, no event is lost or duplicated, and the export equals a single-process run's.
 */
class MultiProcessTest {
    static final int ITEMS = 90;

    @TempDir
    Path dir;

    @Test
    void threeProcessesTwoKilledCompleteEveryItemExactlyOnce() throws Exception {
        StringBuilder seeds = new StringBuilder();
        for (int i = 0; i < ITEMS; i++) {
            seeds.append("{\"id\": \"s")
                    .append(i)
                    .append("\", \"n\": ")
                    .append(i)
                    .append("}\n");
        }
        Files.writeString(dir.resolve("seeds.jsonl"), seeds);
        Random rnd = new Random();
        try (OpenAiTestServer server = OpenAiTestServer.start()) {
            AtomicInteger calls = new AtomicInteger();
            server.answerWith(r -> {
                calls.incrementAndGet();
                String q = r.lastUserMessage();
                return Reply.content("answer to " + q)
                        .withUsage(q.length(), 3)
                        // Slow enough that one process cannot finish every item before the others have joined
                        // (group commit makes the log's own cost small).
                        .withLatency(Duration.ofMillis(150 + rnd.nextInt(150)));
            });
            Path yaml = dir.resolve("multi.yaml");
            Files.writeString(yaml, """
            name: multi
            input: seeds.jsonl
            id_field: id
            steps:
              - name: ask
                kind: chat
                url: %s
                model: m
                messages: [{role: user, content: "what is {{n}} squared?"}]
              - {name: tag, kind: template, template: "{{n}}: {{ask}}", output_field: line}
            """.formatted(server.chatUrl()));
            Path root = dir.resolve("root");
            List<Process> procs = new ArrayList<>();
            List<CompletableFuture<List<String>>> outputs = new ArrayList<>();
            int[] killAfter = {2 + rnd.nextInt(5), 2 + rnd.nextInt(5), -1};
            List<String> killed = new CopyOnWriteArrayList<>();
            for (int p = 0; p < 3; p++) {
                Process proc = new ProcessBuilder(ChildJvm.command(
                                dir, RunMain.class.getName(), yaml.toString(), root.toString(), "exp", "3"))
                        .redirectError(dir.resolve("stderr-" + p + ".txt").toFile())
                        .start();
                procs.add(proc);
                int limit = killAfter[p];
                int index = p;
                outputs.add(CompletableFuture.supplyAsync(() -> {
                    List<String> lines = new ArrayList<>();
                    try (BufferedReader r =
                            new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
                        String l;
                        int finished = 0;
                        while ((l = r.readLine()) != null) {
                            lines.add(l);
                            if (l.contains("item_finished") && ++finished == limit) {
                                proc.destroyForcibly(); // SIGKILL mid-work
                                killed.add("p" + index);
                            }
                        }
                    } catch (java.io.IOException e) {
                        lines.add("READ FAILED " + e);
                    }
                    return lines;
                }));
            }
            for (Process p : procs) {
                assertThat(p.waitFor(240, TimeUnit.SECONDS)).isTrue();
            }
            List<String> survivor = outputs.get(2).get(10, TimeUnit.SECONDS);
            assertThat(killed).as("killed processes").hasSize(2);
            assertThat(procs.get(2).exitValue())
                    .as("survivor exit; stderr: %s", Files.readString(dir.resolve("stderr-2.txt")))
                    .isZero();
            assertThat(survivor).anyMatch(l -> l.startsWith("DONE "));

            // Every item completed; each step once; exactly the events one history needs (created, id, n, then
            // 3 chat fields + STEP_COMPLETED, then line + STEP_COMPLETED + TERMINAL).
            ExperimentStatus s = Experiments.status(LogRoot.local(root), "multi", "exp");
            assertThat(s.items()).isEqualTo(ITEMS);
            assertThat(s.completed()).isEqualTo(ITEMS);
            assertThat(s.failed()).isZero();
            for (int i = 0; i < ITEMS; i++) {
                JsonNode item = Experiments.item(LogRoot.local(root), "multi", "exp", "s" + i)
                        .orElseThrow();
                assertThat(item.path("completed_steps"))
                        .extracting(n -> n.path("step").asText())
                        .as("steps of s%d", i)
                        .containsExactly("ask", "tag");
                assertThat(item.path("history")).as("history of s%d", i).hasSize(10);
            }
            // Each process wrote through its slot's writer; a process that starts after another was killed may take
            // the dead one's slot (and writer) instead of a new one, so at least two distinct writers.
            assertThat(s.processes())
                    .extracting(ProcessStatus::writer)
                    .contains("runner")
                    .doesNotHaveDuplicates()
                    .hasSizeGreaterThanOrEqualTo(2);
            assertThat(s.processes().stream()
                            .mapToLong(ProcessStatus::itemsFinished)
                            .sum())
                    .isEqualTo(ITEMS);
            assertThat(s.processes()).allSatisfy(p -> assertThat(p.live()).isFalse());
            // The log counts every recorded attempt's requests; a killed process's last requests were sent but not
            // recorded (their answers were lost with it and asked again by the others).
            assertThat(s.usage().requests()).isBetween((long) ITEMS, (long) calls.get());

            // The same pipeline in one process: the same export (up to the experiment's name).
            ExperimentStatus single = PipelineRunner.run(
                    PipelineParser.parse(yaml),
                    new PipelineRunner.Options(LogRoot.local(root), "single", 4, DatagenProgress.NONE));
            assertThat(single.completed()).isEqualTo(ITEMS);
            Path multiOut = dir.resolve("multi.jsonl");
            Path singleOut = dir.resolve("single.jsonl");
            Experiments.export(LogRoot.local(root), "multi", "exp", multiOut);
            Experiments.export(LogRoot.local(root), "multi", "single", singleOut);
            assertThat(withoutExperiment(multiOut)).hasSize(ITEMS).isEqualTo(withoutExperiment(singleOut));
        }
    }

    private static List<String> withoutExperiment(Path export) throws Exception {
        List<String> out = new ArrayList<>();
        for (String l : Files.readAllLines(export)) {
            ObjectNode o = (ObjectNode) Json.parse(l);
            ((ObjectNode) o.get("metadata")).remove("experiment");
            out.add(Json.canonical(o));
        }
        return out;
    }
}
