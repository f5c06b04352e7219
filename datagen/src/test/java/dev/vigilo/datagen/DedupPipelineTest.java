package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.crash.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dedup steps decide in item order whatever the timing: a pipeline whose items reach the dedup steps in the reverse
 * of item order (a command step sleeps longest for the first items) gives the same filtered items and the same
 * "duplicate of" ids in a single clean run, in a run killed with SIGKILL again and again and resumed, and in three
 * processes sharing the experiment (one of them killed).
 *
 * <p>Items: {@value #TOPICS} unrelated 40-word texts (s0..s11); the same texts in capitals with fullwidth letters and
 * doubled white space (s12..s23: exact duplicates after normalisation); the same texts with the last word changed
 * (s24..s35: near duplicates, estimated Jaccard about 0.95). Expected: s0..s11 completed, s12+t filtered by the exact
 * step as a duplicate of s<t>, s24+t filtered by the minhash step as a duplicate of s<t>.
 */
class DedupPipelineTest {
    static final int TOPICS = 12;
    static final int ITEMS = 3 * TOPICS;

    @TempDir
    Path dir;

    Path yaml;
    Path root;

    @BeforeEach
    void pipeline() throws Exception {
        StringBuilder seeds = new StringBuilder();
        for (int i = 0; i < ITEMS; i++) {
            int topic = i % TOPICS;
            String base = DedupTest.words("t" + topic + "w", 40);
            String q = switch (i / TOPICS) {
                case 0 -> base;
                case 1 -> fullwidth(base.toUpperCase(Locale.ROOT)).replace(" ", "  \t");
                default -> base.substring(0, base.lastIndexOf(' ')) + " changed";
            };
            // Later items reach the dedup steps first.
            String delay = String.format(Locale.ROOT, "%.2f", 0.05 + 0.02 * (ITEMS - 1 - i));
            seeds.append(Json.canonical(Json.MAPPER
                            .createObjectNode()
                            .put("id", "s" + i)
                            .put("question", q)
                            .put("delay", delay)))
                    .append('\n');
        }
        Files.writeString(dir.resolve("seeds.jsonl"), seeds);
        yaml = dir.resolve("dedup.yaml");
        Files.writeString(yaml, """
                name: dd
                input: seeds.jsonl
                id_field: id
                steps:
                  - name: slow
                    kind: command
                    command: 'd=$(sed -n "s/.*\\"delay\\": *\\"\\([0-9.]*\\)\\".*/\\1/p"); sleep "$d"; echo "{\\"slept\\": \\"$d\\"}"'
                  - {name: unique, kind: dedup, field: question}
                  - {name: near, kind: dedup, field: question, method: minhash, threshold: 0.85}
                  - {name: tag, kind: template, template: "kept {{id}}", output_field: note}
                """);
        root = dir.resolve("root");
    }

    @Test
    void singleCleanRunFiltersLaterDuplicatesInItemOrder() {
        ExperimentStatus s = PipelineRunner.run(
                PipelineParser.parse(yaml),
                new PipelineRunner.Options(LogRoot.local(root), "clean", 6, DatagenProgress.NONE));
        assertThat(s.completed()).isEqualTo(TOPICS);
        assertThat(s.filtered()).isEqualTo(2 * TOPICS);
        assertThat(s.filteredByStep()).containsExactlyInAnyOrderEntriesOf(Map.of("unique", 12L, "near", 12L));
        assertThat(decisions("clean")).isEqualTo(expected());
        JsonNode near =
                Experiments.item(LogRoot.local(root), "dd", "clean", "s30").orElseThrow();
        assertThat(near.path("filtered_by").path("step").asText()).isEqualTo("near");
        assertThat(near.path("filtered_by").path("reason").asText()).isEqualTo("duplicate");
        assertThat(new java.math.BigDecimal(
                        near.path("filtered_by").path("similarity").asText()))
                .isGreaterThanOrEqualTo(new java.math.BigDecimal("0.85"))
                .isLessThan(java.math.BigDecimal.ONE);
        assertThat(near.path("completed_steps")
                        .get(2)
                        .path("dedup")
                        .path("method")
                        .asText())
                .isEqualTo("minhash");
        // Kept items pass both steps with their keys recorded, and run on.
        JsonNode kept =
                Experiments.item(LogRoot.local(root), "dd", "clean", "s0").orElseThrow();
        assertThat(kept.path("fields").path("note").asText()).isEqualTo("kept s0");
        assertThat(kept.has("filtered_by")).isFalse();

        // A second run of the finished experiment changes nothing.
        ExperimentStatus again = PipelineRunner.run(
                PipelineParser.parse(yaml),
                new PipelineRunner.Options(LogRoot.local(root), "clean", 2, DatagenProgress.NONE));
        assertThat(again.filtered()).isEqualTo(2 * TOPICS);
        assertThat(decisions("clean")).isEqualTo(expected());
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void runKilledAtSeveralPointsAndResumedDecidesTheSame() throws Exception {
        int killsWanted = 6;
        long seed = Long.getLong("vigilo.crash.seed", System.nanoTime());
        System.out.println("DedupPipelineTest: seed " + seed + " (-Dvigilo.crash.seed=" + seed + " repeats it)");
        Random rnd = new Random(seed);
        // Two workers, not four: a child's slow steps run on while the kill waits for its chosen finished item, and
        // on a loaded machine four workers could do all 36 of them within two children, so that the third finished
        // the run (in one burst: items finish in item order) before its kill landed. Two still deliver items to the
        // dedup steps out of order.
        RunKills.Outcome outcome = RunKills.run(
                dir, List.of(yaml.toString(), root.toString(), "killed", "2"), killsWanted, 6, 2, 0, 100, rnd);
        boolean done = outcome.finished();
        int kills = outcome.killed();
        assertThat(done).as("a run finished").isTrue();
        assertThat(kills).as("runs killed (seed %d)", seed).isGreaterThanOrEqualTo(killsWanted / 2);
        assertThat(decisions("killed")).isEqualTo(expected());
        for (int i = 0; i < ITEMS; i++) {
            JsonNode item = Experiments.item(LogRoot.local(root), "dd", "killed", "s" + i)
                    .orElseThrow();
            // Each step instance once: no decision was written twice.
            List<String> steps = new ArrayList<>();
            item.path("completed_steps").forEach(c -> steps.add(c.path("step").asText()));
            assertThat(steps).as("steps of s%d", i).doesNotHaveDuplicates();
        }
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void threeProcessesOneKilledDecideTheSame() throws Exception {
        List<Process> procs = new ArrayList<>();
        List<CompletableFuture<Boolean>> outputs = new ArrayList<>();
        AtomicInteger killed = new AtomicInteger();
        for (int p = 0; p < 3; p++) {
            Process proc = new ProcessBuilder(ChildJvm.command(
                            dir, RunMain.class.getName(), yaml.toString(), root.toString(), "multi", "2"))
                    .redirectError(dir.resolve("stderr-" + p + ".txt").toFile())
                    .start();
            procs.add(proc);
            boolean kill = p == 0;
            outputs.add(CompletableFuture.supplyAsync(() -> {
                boolean finished = false;
                try (BufferedReader r =
                        new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
                    String l;
                    int n = 0;
                    while ((l = r.readLine()) != null) {
                        finished |= l.startsWith("DONE ");
                        if (kill && l.contains("item_finished") && ++n == 3) {
                            proc.destroyForcibly(); // SIGKILL mid-work
                            killed.incrementAndGet();
                        }
                    }
                } catch (java.io.IOException e) {
                    return false;
                }
                return finished;
            }));
        }
        for (Process p : procs) {
            assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        }
        for (int p = 1; p < 3; p++) {
            assertThat(outputs.get(p).get(10, TimeUnit.SECONDS))
                    .as("process %d finished; stderr: %s", p, Files.readString(dir.resolve("stderr-" + p + ".txt")))
                    .isTrue();
        }
        ExperimentStatus s = Experiments.status(LogRoot.local(root), "dd", "multi");
        assertThat(s.processes().stream().filter(p -> p.stepsCompleted() > 0))
                .as("processes that wrote steps: %s", s.processes())
                .hasSizeGreaterThanOrEqualTo(2);
        assertThat(decisions("multi")).isEqualTo(expected());
    }

    /** Per item: "completed", or "filtered by STEP as a duplicate of ID". */
    private Map<String, String> decisions(String experiment) {
        Map<String, String> out = new TreeMap<>();
        for (int i = 0; i < ITEMS; i++) {
            JsonNode item = Experiments.item(LogRoot.local(root), "dd", experiment, "s" + i)
                    .orElseThrow();
            String status = item.path("status").asText();
            JsonNode f = item.path("filtered_by");
            out.put(
                    "s" + i,
                    status.equals("filtered")
                            ? "filtered by " + f.path("step").asText() + " as a duplicate of "
                                    + f.path("duplicate_of").asText()
                            : status);
        }
        return out;
    }

    private static Map<String, String> expected() {
        Map<String, String> out = new TreeMap<>();
        for (int i = 0; i < ITEMS; i++) {
            int topic = i % TOPICS;
            out.put(
                    "s" + i,
                    switch (i / TOPICS) {
                        case 0 -> "completed";
                        case 1 -> "filtered by unique as a duplicate of s" + topic;
                        default -> "filtered by near as a duplicate of s" + topic;
                    });
        }
        return out;
    }

    /** ASCII letters as their fullwidth forms (NFKC maps them back). */
    private static String fullwidth(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            b.append(c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 0xFF21) : c);
        }
        return b.toString();
    }
}
