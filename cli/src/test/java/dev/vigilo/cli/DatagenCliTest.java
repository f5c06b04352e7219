package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo datagen run/status/item/export} on the bundled offline example, then the export uploaded as a
 * dataset: the datagen pillar's output becomes a dataset.
 */
class DatagenCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    @Test
    void exampleRunsResumesExportsAndUploads() throws Exception {
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        Path pipeline = Path.of("..", "examples", "datagen", "pipeline.yaml")
                .toAbsolutePath()
                .normalize();
        Path root = home.resolve("durable");

        CliRunner.Result run = cli.run(
                "datagen",
                "run",
                pipeline.toString(),
                "--experiment",
                "demo",
                "--durable-root",
                root.toString(),
                "--workers",
                "2");
        assertThat(run.exitCode()).as(run.err() + run.out()).isZero();
        String[] lines = run.out().trim().split("\n");
        JsonNode last = JSON.readTree(lines[lines.length - 1]);
        assertThat(last.get("failed").asLong()).isZero();
        assertThat(last.get("filtered").asLong()).isEqualTo(1);
        // Not a terminal: one JSON line per finished item before the status, counting up to every item.
        List<String> itemLines = List.of(lines).subList(0, lines.length - 1);
        assertThat(itemLines).hasSize(last.get("items").asInt());
        assertThat(itemLines)
                .allSatisfy(l -> assertThat(l)
                        .matches("\\{\"event\":\"item_finished\",\"finished\":\\d+,\"item_id\":\"[^\"]+\","
                                + "\"items\":\\d+,\"status\":\"(completed|filtered)\"}"));
        assertThat(itemLines)
                .extracting(l -> JSON.readTree(l).get("finished").asInt())
                .containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
        assertThat(JSON.readTree(itemLines.get(itemLines.size() - 1))
                        .get("items")
                        .asInt())
                .isEqualTo(10);
        assertThat(Files.isDirectory(root.resolve("datagen_checkpoints/quiz/demo/log.lance")))
                .isTrue();

        CliRunner.Result status = cli.run(
                "datagen",
                "status",
                "--pipeline",
                "quiz",
                "--experiment",
                "demo",
                "--durable-root",
                root.toString(),
                "--json");
        assertThat(status.exitCode()).as(status.err()).isZero();
        JsonNode s = JSON.readTree(status.out());
        for (String key : List.of("items", "completed", "filtered", "failed", "running")) {
            assertThat(s.has(key)).as(key).isTrue();
        }
        assertThat(s.get("running").asLong()).isZero();

        // Running again resumes a finished experiment: nothing re-runs, the counts stay.
        CliRunner.Result again = cli.run(
                "datagen", "run", pipeline.toString(), "--experiment", "demo", "--durable-root", root.toString());
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out().trim().lines()).as("no item runs again").hasSize(1);
        assertThat(JSON.readTree(cli.run(
                                "datagen",
                                "status",
                                "--pipeline",
                                "quiz",
                                "--experiment",
                                "demo",
                                "--durable-root",
                                root.toString(),
                                "--json")
                        .out()))
                .isEqualTo(s);

        CliRunner.Result item = cli.run(
                "datagen",
                "item",
                "q1",
                "--pipeline",
                "quiz",
                "--experiment",
                "demo",
                "--durable-root",
                root.toString());
        assertThat(item.exitCode()).as(item.err()).isZero();
        assertThat(item.out()).contains("q1");
        assertThat(cli.run(
                                "datagen",
                                "item",
                                "nope",
                                "--pipeline",
                                "quiz",
                                "--experiment",
                                "demo",
                                "--durable-root",
                                root.toString())
                        .exitCode())
                .isEqualTo(ExitCode.INVALID_INPUT);

        Path export = home.resolve("export.jsonl");
        CliRunner.Result exported = cli.run(
                "datagen",
                "export",
                "--pipeline",
                "quiz",
                "--experiment",
                "demo",
                "--durable-root",
                root.toString(),
                "--out",
                export.toString());
        assertThat(exported.exitCode()).as(exported.err()).isZero();
        long exportedItems = Files.readAllLines(export).size();
        assertThat(exportedItems).isPositive();

        // One rule for user-named output files: an existing file is kept unless --force; a missing directory or a
        // directory target is exit 3; nothing (not even a temporary file) is left behind.
        String[] exportAgain = {
            "datagen",
            "export",
            "--pipeline",
            "quiz",
            "--experiment",
            "demo",
            "--durable-root",
            root.toString(),
            "--out"
        };
        Files.writeString(export, "keep me\n");
        CliRunner.Result kept = cli.run(concat(exportAgain, export.toString()));
        assertThat(kept.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(kept.err().strip())
                .isEqualTo("vigilo: error: --out " + export + " already exists; choose another "
                        + "--out, or pass --force to replace it");
        assertThat(Files.readString(export)).isEqualTo("keep me\n");
        CliRunner.Result forced = cli.run(concat(exportAgain, export.toString(), "--force"));
        assertThat(forced.exitCode()).as(forced.err()).isZero();
        assertThat(Files.readAllLines(export)).hasSize((int) exportedItems);
        Path intoMissing = home.resolve("no-such-dir").resolve("x.jsonl");
        CliRunner.Result missingDir = cli.run(concat(exportAgain, intoMissing.toString()));
        assertThat(missingDir.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(missingDir.err()).contains("does not exist; create it first").hasLineCount(1);
        CliRunner.Result ontoDir = cli.run(concat(exportAgain, home.toString()));
        assertThat(ontoDir.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(ontoDir.err()).contains("is a directory").hasLineCount(1);
        try (var files = Files.list(home)) {
            assertThat(files.map(f -> f.getFileName().toString())).noneMatch(n -> n.endsWith(".tmp"));
        }

        CliRunner.Result upload = cli.run("dataset", "upload", export.toString(), "--json");
        assertThat(upload.exitCode()).as(upload.err()).isZero();
        assertThat(JSON.readTree(upload.out()).get("case_count").asLong()).isEqualTo(exportedItems);
    }

    @Test
    void invalidPipelinesAndUnknownExperimentsAreClearErrors() throws Exception {
        CliRunner cli = new CliRunner(home, Map.of(), List.of());
        Path bad = home.resolve("bad.yaml");
        Files.writeString(bad, "name: x\nsteps:\n  - name: a\n    kind: teleport\n");
        CliRunner.Result r = cli.run(
                "datagen",
                "run",
                bad.toString(),
                "--experiment",
                "e",
                "--durable-root",
                home.resolve("d").toString());
        assertThat(r.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(r.err()).contains("bad.yaml:");

        CliRunner.Result missing = cli.run(
                "datagen",
                "status",
                "--pipeline",
                "p",
                "--experiment",
                "none",
                "--durable-root",
                home.resolve("d").toString());
        assertThat(missing.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
    }

    private static String[] concat(String[] head, String... tail) {
        String[] all = java.util.Arrays.copyOf(head, head.length + tail.length);
        System.arraycopy(tail, 0, all, head.length, tail.length);
        return all;
    }
}
