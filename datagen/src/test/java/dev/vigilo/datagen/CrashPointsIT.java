package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.crash.ChildJvm;
import dev.vigilo.common.crash.CrashSweep;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash-point sweep of a datagen run and the checkpoint log under it: a small pipeline with every step kind (a
 * template, a command that fails its first attempt and is retried, a filter, an expand and a loop) runs in a child
 * JVM halted at one durable boundary (a Lance put, a memtable flush, a shard open, a merge, the log's creation, an
 * experiment record's write or rename, a maintenance step), then the same run resumes to the end; its export is
 * byte-equal to an uninterrupted run's and every item's history is the uninterrupted one (no step completed twice,
 * no extra loop iteration, no lost retry).
 *
 * <p>Every boundary of the workload, or {@value #LIMIT} of them at random with a printed seed when there are more
 * (see {@link CrashSweep} for the system properties that run them all).
 */
class CrashPointsIT {
    static final int LIMIT = 100;
    static final Duration CHILD_TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES) // the exhaustive sweep; the default selection takes minutes
    void aRunHaltedAtAnyDurableBoundaryResumesToTheUninterruptedResult() throws Exception {
        Path yaml = pipeline();
        CrashSweep sweep = new CrashSweep(
                RunMain.class.getName(),
                List.of("--add-opens=java.base/java.nio=ALL-UNNAMED", "-Djava.io.tmpdir=" + ChildJvm.tmp(dir)),
                dir.resolve("children"));

        // The uninterrupted run, traced: its boundaries and its end state.
        Path cleanRoot = dir.resolve("clean");
        List<String> boundaries = sweep.trace(CHILD_TIMEOUT, yaml.toString(), cleanRoot.toString(), "exp", "1");
        assertThat(boundaries).as("the workload passes durable boundaries").isNotEmpty();
        System.out.println("datagen boundaries: " + countByName(boundaries));
        String cleanExport = export(cleanRoot, "clean");
        Map<String, String> cleanHistories = histories(cleanRoot);

        CrashSweep.Selection selection = CrashSweep.select(boundaries.size(), LIMIT);
        List<String> notReached = new ArrayList<>();
        CrashSweep.forEach(
                selection,
                CrashSweep.parallelism(),
                point -> sweep.haltAt(
                        point, CHILD_TIMEOUT, yaml.toString(), root(point).toString(), "exp", "1"),
                (point, halted) -> {
                    Path root = root(point);
                    String where = "boundary " + point + " (" + boundaries.get(point - 1) + "), " + selection;
                    if (!halted.halted()) {
                        assertThat(halted.exitCode())
                                .as(where + ": " + halted.err())
                                .isZero();
                        notReached.add(where);
                    }
                    ExperimentStatus resumed = PipelineRunner.run(
                            PipelineParser.parse(yaml),
                            new PipelineRunner.Options(LogRoot.local(root), "exp", 1, DatagenProgress.NONE));
                    assertThat(resumed.running()).as(where).isZero();
                    assertThat(export(root, "halt-" + point)).as(where).isEqualTo(cleanExport);
                    assertThat(histories(root)).as(where).isEqualTo(cleanHistories);
                    deleteTree(root);
                });
        System.out.println("datagen crash sweep: " + selection.points().size() + " halts of " + boundaries.size()
                + " boundaries; not reached in the halted run (it finished): " + notReached.size());
        assertThat(notReached.size())
                .as("halts that did not happen: %s", notReached)
                .isLessThanOrEqualTo(selection.points().size() / 10);
    }

    private Path root(int point) {
        return dir.resolve("halt-" + point);
    }

    private Path pipeline() throws Exception {
        Files.writeString(dir.resolve("seeds.jsonl"), """
                {"id": "a", "n": 1, "keep": true}
                {"id": "c", "n": 3, "keep": false}
                """);
        return Files.writeString(dir.resolve("crash.yaml"), """
                name: crash
                input: seeds.jsonl
                id_field: id
                steps:
                  - {name: question, kind: template, template: "q{{n}}", output_field: question}
                  - name: draft
                    kind: command
                    retries: 1
                    command: 'cat > /dev/null; if [ "$VIGILO_ITEM_ID" = a ] && [ "$VIGILO_ATTEMPT" = 1 ]; then exit 3; fi; echo "{\\"variants\\": [\\"x\\", \\"y\\"]}"'
                  - {name: keep, kind: filter, keep_if: {field: keep, equals: true}}
                  - {name: split, kind: expand, field: variants, as: variant}
                  - name: polish
                    kind: loop
                    max_iterations: 3
                    until: {field: rounds, equals: 2}
                    body:
                      name: polish_once
                      kind: command
                      command: 'r=$(sed -n "s/.*\\"rounds\\":\\([0-9]*\\).*/\\1/p"); echo "{\\"rounds\\": $(( ${r:-0} + 1 ))}"'
                """);
    }

    /** The export's bytes (as UTF-8 text, for readable differences). */
    private String export(Path root, String name) throws Exception {
        Path out = dir.resolve(name + ".jsonl");
        Experiments.export(LogRoot.local(root), "crash", "exp", out, true);
        String bytes = Files.readString(out, StandardCharsets.UTF_8);
        Files.delete(out);
        return bytes;
    }

    /** Per item: its status and its events in item_seq order, without the ids, writer epochs and times. */
    private static Map<String, String> histories(Path root) {
        Map<String, String> all = new TreeMap<>();
        for (String id : List.of("a", "c", "a.0", "a.1")) {
            JsonNode item = Experiments.item(LogRoot.local(root), "crash", "exp", id)
                    .orElseThrow(() -> new AssertionError("no item " + id));
            StringBuilder h = new StringBuilder(item.path("status").asText());
            for (JsonNode e : item.path("history")) {
                h.append("\n  ").append(e.path("item_seq").asText());
                for (String key : List.of(
                        "event_type", "step", "iteration", "attempt", "field", "value", "terminal", "error_type")) {
                    if (e.has(key) && !e.get(key).isNull()) {
                        h.append(' ').append(key).append('=').append(e.get(key));
                    }
                }
            }
            all.put(id, h.toString());
        }
        return all;
    }

    private static Map<String, Integer> countByName(List<String> names) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        names.forEach(n -> counts.merge(n, 1, Integer::sum));
        return counts;
    }

    private static void deleteTree(Path root) throws Exception {
        if (!Files.exists(root)) {
            return;
        }
        try (var paths = Files.walk(root)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
