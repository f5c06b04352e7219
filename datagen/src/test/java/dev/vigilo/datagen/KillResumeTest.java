package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.checkpoint.LogRoot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 a real `datagen run` process repeatedly while it works, then let the same command finish:
 * every item is completed, no step has two STEP_COMPLETED events, nothing is duplicated or lost.
 */
class KillResumeTest {
    /** Kills per run of the test; {@code -Dvigilo.kill.points=N} runs more. */
    static final int KILLS = Integer.getInteger("vigilo.kill.points", 20);

    static final int SEEDS = 80;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES) // 20 and more child JVMs, each loading Lance
    void repeatedKillMinusNineThenResumeCompletesEverythingExactlyOnce() throws Exception {
        StringBuilder seeds = new StringBuilder();
        for (int i = 0; i < SEEDS; i++) {
            seeds.append("{\"id\": \"s")
                    .append(i)
                    .append("\", \"n\": ")
                    .append(i)
                    .append("}\n");
        }
        Files.writeString(dir.resolve("seeds.jsonl"), seeds);
        Path runs = dir.resolve("runs.txt");
        Path yaml = dir.resolve("kill.yaml");
        Files.writeString(yaml, """
        name: killme
        input: seeds.jsonl
        id_field: id
        steps:
          - name: one
            kind: command
            command: 'cat > /dev/null; echo "$VIGILO_ITEM_ID one" >> %1$s; sleep 0.05; echo "{\\"a\\": 1}"'
          - name: two
            kind: command
            command: 'cat > /dev/null; echo "$VIGILO_ITEM_ID two" >> %1$s; sleep 0.05; echo "{\\"b\\": 2}"'
          - {name: three, kind: template, template: "{{a}}-{{b}}", output_field: c}
        """.formatted(runs));
        Path root = dir.resolve("root");
        long seed = Long.getLong("vigilo.crash.seed", System.nanoTime());
        System.out.println(
                "KillResumeTest: " + KILLS + " kills, seed " + seed + " (-Dvigilo.crash.seed=" + seed + " repeats it)");
        Random rnd = new Random(seed);
        RunKills.Outcome outcome =
                RunKills.run(dir, List.of(yaml.toString(), root.toString(), "exp", "2"), KILLS, 8, 1, 50, 300, rnd);
        boolean done = outcome.finished();
        int kills = outcome.killed();
        assertThat(done).as("a run finished").isTrue();
        assertThat(kills).as("runs killed (seed %d)", seed).isGreaterThanOrEqualTo(KILLS * 3 / 4);

        ExperimentStatus s = Experiments.status(LogRoot.local(root), "killme", "exp");
        assertThat(s.items()).isEqualTo(SEEDS);
        assertThat(s.completed()).isEqualTo(SEEDS);
        assertThat(s.failed()).isZero();
        for (int i = 0; i < SEEDS; i++) {
            JsonNode item = Experiments.item(LogRoot.local(root), "killme", "exp", "s" + i)
                    .orElseThrow();
            assertThat(item.path("completed_steps"))
                    .extracting(n -> n.path("step").asText())
                    .as("steps of s%d", i)
                    .containsExactly("one", "two", "three");
            // created + 2 seed fields, then per step its field + STEP_COMPLETED, then TERMINAL: 10
            // events, no more.
            assertThat(item.path("history")).as("history of s%d", i).hasSize(10);
            assertThat(item.path("fields").path("c").asText()).isEqualTo("1-2");
        }
        // A step may re-run only if it was killed after running but before its batch was durable:
        // at most one per
        // worker per kill.
        Map<String, Integer> counts = new HashMap<>();
        Files.readAllLines(runs).forEach(l -> counts.merge(l, 1, Integer::sum));
        assertThat(counts).hasSize(2 * SEEDS);
        int reruns = counts.values().stream().mapToInt(c -> c - 1).sum();
        assertThat(reruns).isLessThanOrEqualTo(kills * 2);
    }
}
