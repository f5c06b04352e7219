package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
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
        // No budget: no budget key, and the control database is not opened (an unreachable one does not matter).
        assertThat(s.has("budget")).isFalse();
        CliRunner.Result noDatabase = new CliRunner(
                        home, Map.of(), List.of("--control-db", "jdbc:postgresql://127.0.0.1:1/nothing"))
                .run(
                        "datagen",
                        "status",
                        "--pipeline",
                        "quiz",
                        "--experiment",
                        "demo",
                        "--durable-root",
                        root.toString());
        assertThat(noDatabase.exitCode()).as(noDatabase.err()).isZero();
        assertThat(noDatabase.out()).doesNotContain("budget");
        for (String key : List.of("items", "completed", "filtered", "failed", "running")) {
            assertThat(s.has(key)).as(key).isTrue();
        }
        assertThat(s.get("running").asLong()).isZero();

        // Running again resumes a finished experiment: nothing re-runs, the counts stay.
        CliRunner.Result again = cli.run(
                "datagen", "run", pipeline.toString(), "--experiment", "demo", "--durable-root", root.toString());
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out().trim().lines()).as("no item runs again").hasSize(1);
        // The same status, but for the process list, which names the resuming run's process now.
        JsonNode resumedStatus = JSON.readTree(cli.run(
                        "datagen",
                        "status",
                        "--pipeline",
                        "quiz",
                        "--experiment",
                        "demo",
                        "--durable-root",
                        root.toString(),
                        "--json")
                .out());
        assertThat(resumedStatus.get("processes").get(0).get("items_finished").asInt())
                .isEqualTo(10);
        ((com.fasterxml.jackson.databind.node.ObjectNode) resumedStatus).remove("processes");
        ((com.fasterxml.jackson.databind.node.ObjectNode) s).remove("processes");
        assertThat(resumedStatus).isEqualTo(s);

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
            assertThat(files.map(f -> f.getFileName().toString())).noneMatch(n -> n.contains(".tmp"));
        }

        CliRunner.Result upload = cli.run("dataset", "upload", export.toString(), "--json");
        assertThat(upload.exitCode()).as(upload.err()).isZero();
        assertThat(JSON.readTree(upload.out()).get("case_count").asLong()).isEqualTo(exportedItems);

        // Straight into the catalog: the same items, mapped; the experiment is the dataset's origin.
        String[] toDataset = {
            "datagen", "export", "--pipeline", "quiz", "--experiment", "demo", "--durable-root", root.toString()
        };
        CliRunner.Result unmapped = cli.run(concat(toDataset, "--to-dataset"));
        assertThat(unmapped.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(unmapped.err()).contains("--to-dataset needs --map");
        CliRunner.Result missing =
                cli.run(concat(toDataset, "--to-dataset", "--map", "id=item_id,input=question,expected=solution"));
        assertThat(missing.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(missing.err())
                .startsWith("vigilo: error: experiment \"demo\" of pipeline \"quiz\": record \"")
                .contains("no field \"solution\" (mapped onto expected)")
                .hasLineCount(1);
        CliRunner.Result stored = cli.run(concat(
                toDataset, "--to-dataset", "--map", "id=item_id,input=question", "--name", "quiz-cases", "--json"));
        assertThat(stored.exitCode()).as(stored.err()).isZero();
        JsonNode entry = JSON.readTree(stored.out());
        assertThat(entry.get("case_count").asLong()).isEqualTo(exportedItems);
        assertThat(entry.get("name").asText()).isEqualTo("quiz-cases");
        CliRunner.Result shown =
                cli.run("dataset", "show", entry.get("upload_id").asText(), "--json");
        JsonNode origin = JSON.readTree(shown.out()).get("origin");
        assertThat(origin.get("pipeline").asText()).isEqualTo("quiz");
        assertThat(origin.get("experiment").asText()).isEqualTo("demo");
        assertThat(origin.get("items").asLong()).isEqualTo(exportedItems);
        assertThat(origin.get("map").asText()).isEqualTo("id=item_id,input=question");
        assertThat(cli.run("dataset", "show", entry.get("upload_id").asText()).out())
                .contains("made from:        datagen experiment demo of pipeline quiz");

        // The pillars meet: the generated dataset is evaluated by the example's profile (examples/README.md).
        CliRunner.Result forEval = cli.run(concat(
                toDataset,
                "--to-dataset",
                "--map",
                "id=item_id,input=question,expected=answer,metadata.variant=variant",
                "--name",
                "quiz-generated"));
        assertThat(forEval.exitCode()).as(forEval.err()).isZero();
        String evalRun = java.util.UUID.randomUUID().toString();
        Path profile = Path.of("..", "examples", "datagen", "eval-profile.yaml")
                .toAbsolutePath()
                .normalize();
        CliRunner.Result created = cli.run(
                "run",
                "create",
                "--profile-file",
                profile.toString(),
                "--dataset-upload-id",
                forEval.out().trim(),
                "--run-id",
                evalRun);
        assertThat(created.exitCode()).as(created.err()).isZero();
        CliRunner.Result worker = cli.run("worker", "--exit-when-idle");
        assertThat(worker.exitCode()).as(worker.err()).isZero();
        JsonNode evaluated =
                JSON.readTree(cli.run("run", "status", evalRun, "--json").out());
        assertThat(evaluated.get("status").asText()).isEqualTo("settled");
        assertThat(evaluated.get("verdict").asText()).as(evaluated.toString()).isEqualTo("passed");
    }

    @Test
    void invalidPipelinesAndUnknownExperimentsAreClearErrors() throws Exception {
        CliRunner cli = new CliRunner(home, Map.of(), List.of());
        Path bad = home.resolve("bad.yaml");
        Files.writeString(bad, "name: x\ninput: seeds.jsonl\nsteps:\n  - name: a\n    kind: teleport\n");
        CliRunner.Result r = cli.run(
                "datagen",
                "run",
                bad.toString(),
                "--experiment",
                "e",
                "--durable-root",
                home.resolve("d").toString());
        assertThat(r.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(r.err())
                .contains(bad + ":5:11: steps[0].kind: unknown step kind \"teleport\"; use command, http, chat,"
                        + " template, filter, expand, loop or dedup");

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

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void aSecondRunOfAnExperimentJoinsTheFirstAndBothFinish() throws Exception {
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        Path dir = Files.createDirectories(home.resolve("slow"));
        StringBuilder seeds = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            seeds.append("{\"id\":\"s").append(i).append("\"}\n");
        }
        Files.writeString(dir.resolve("seeds.jsonl"), seeds.toString());
        Path pipeline = Files.writeString(dir.resolve("slow.yaml"), """
                name: slow
                input: seeds.jsonl
                id_field: id
                steps:
                  - name: wait
                    kind: command
                    command: |
                      cat > /dev/null
                      touch '%1$s/started'
                      while [ ! -e '%1$s/go' ]; do sleep 0.05; done
                      echo '{"done": true}'
                """.formatted(dir));
        String[] run = {
            "datagen",
            "run",
            pipeline.toString(),
            "--experiment",
            "twice",
            "--durable-root",
            dir.toString(),
            "--workers",
            "1"
        };
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            java.util.concurrent.Future<CliRunner.Result> first = pool.submit(() -> cli.run(run));
            // Every item waits for the file "go": the first run stays in its first item until the second joined.
            awaitFile(dir.resolve("started"), first);
            assertThat(first.isDone()).as("the first run is still running").isFalse();
            java.util.concurrent.Future<CliRunner.Result> second = pool.submit(() -> cli.run(run));
            awaitFile(dir.resolve("datagen_checkpoints/slow/twice/assign/slot-1.json"), second);
            assertThat(first.isDone()).as("the first run is still running").isFalse();
            Files.writeString(dir.resolve("go"), "");
            // The runs divide the items: both finish, and the experiment is complete.
            CliRunner.Result one = first.get(120, TimeUnit.SECONDS);
            CliRunner.Result two = second.get(120, TimeUnit.SECONDS);
            assertThat(one.exitCode()).as(one.err()).isZero();
            assertThat(two.exitCode()).as(two.err()).isZero();
            String[] lines = two.out().trim().split("\n");
            assertThat(lines[lines.length - 1]).contains("\"completed\":40").contains("\"writer\":\"runner-1\"");
        } finally {
            pool.shutdownNow();
        }
    }

    /** Waits (bounded) for {@code file}; fails at once with the run's error when {@code run} ends first. */
    private static void awaitFile(Path file, java.util.concurrent.Future<CliRunner.Result> run) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(file)) {
            if (run.isDone()) {
                throw new AssertionError("the run ended before " + file + " appeared: "
                        + run.get().err());
            }
            assertThat(System.nanoTime() - deadline).as("%s appeared", file).isNegative();
            Thread.sleep(20);
        }
    }

    @Test
    void chatPipelineStatusShowsUsageCostAndProcesses() throws Exception {
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        try (dev.vigilo.agent.OpenAiTestServer server = dev.vigilo.agent.OpenAiTestServer.start()) {
            Path dir = Files.createDirectories(home.resolve("chat"));
            Files.writeString(
                    dir.resolve("seeds.jsonl"),
                    "{\"id\": \"a\", \"q\": \"one two\"}\n{\"id\": \"b\", \"q\": \"three\"}\n");
            Path pipeline = Files.writeString(dir.resolve("chat.yaml"), """
                    name: chat
                    input: seeds.jsonl
                    id_field: id
                    prices:
                      m: {prompt_per_million: 2, completion_per_million: 8}
                    steps:
                      - name: ask
                        kind: chat
                        url: %s
                        model: m
                        messages: [{role: user, content: "{{q}}"}]
                    """.formatted(server.chatUrl()));
            String root = dir.resolve("durable").toString();
            CliRunner.Result bad = cli.run(
                    "datagen",
                    "run",
                    pipeline.toString(),
                    "--experiment",
                    "e",
                    "--durable-root",
                    root,
                    "--lease-seconds",
                    "1");
            assertThat(bad.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
            assertThat(bad.err().trim()).doesNotContain("\n").contains("--lease-seconds must be between 3 and 3600");
            CliRunner.Result run = cli.run(
                    "datagen",
                    "run",
                    pipeline.toString(),
                    "--experiment",
                    "e",
                    "--durable-root",
                    root,
                    "--retry-failed");
            assertThat(run.exitCode()).as(run.err()).isZero();
            CliRunner.Result status =
                    cli.run("datagen", "status", "--pipeline", "chat", "--experiment", "e", "--durable-root", root);
            assertThat(status.exitCode()).as(status.err()).isZero();
            // The echo server counts words: "one two" -> 2 prompt, "echo: one two" -> 3 completion tokens.
            assertThat(status.out())
                    .contains("items 2  completed 2")
                    .contains(
                            "usage requests 2  retries 0  cached 0  prompt_tokens 3  completion_tokens 5  cost 0.000046")
                    .contains("usage[ask] requests 2")
                    .containsPattern("process runner  gone  items 2  steps 2  buckets 0  .+/\\d+/");
            assertThat(server.requestCount()).isEqualTo(2);
        }
    }

    @Test
    void aBudgetStopsTheRunWithExit4AndALargerBudgetFinishesIt() throws Exception {
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        try (dev.vigilo.agent.OpenAiTestServer server = dev.vigilo.agent.OpenAiTestServer.start()) {
            // 0.015 a call: 50 prompt + 100 completion tokens at 100 per million.
            server.answerWith(
                    r -> dev.vigilo.agent.OpenAiTestServer.Reply.content("ok").withUsage(50, 100));
            Path dir = Files.createDirectories(home.resolve("budget"));
            StringBuilder seeds = new StringBuilder();
            for (int i = 0; i < 6; i++) {
                seeds.append("{\"id\": \"s")
                        .append(i)
                        .append("\", \"q\": \"q")
                        .append(i)
                        .append("\"}\n");
            }
            Files.writeString(dir.resolve("seeds.jsonl"), seeds);
            String yaml = """
                    name: spend
                    input: seeds.jsonl
                    id_field: id
                    prices:
                      m: {prompt_per_million: 100, completion_per_million: 100}
                    budget: {max_cost: %s}
                    steps:
                      - name: ask
                        kind: chat
                        url: %s
                        model: m
                        max_tokens: 100
                        rate_limit: {requests_per_minute: 6000}
                        messages: [{role: user, content: "{{q}}"}]
                    """;
            Path pipeline = Files.writeString(dir.resolve("spend.yaml"), yaml.formatted("0.04", server.chatUrl()));
            String root = dir.resolve("durable").toString();
            String[] run = {
                "datagen", "run", pipeline.toString(), "--experiment", "e", "--durable-root", root, "--workers", "1"
            };
            CliRunner.Result stopped = cli.run(run);
            assertThat(stopped.exitCode()).as(stopped.err()).isEqualTo(ExitCode.CONFLICT);
            assertThat(stopped.err().trim())
                    .doesNotContain("\n")
                    .contains("experiment e of pipeline spend stopped at its budget: 0.045 charged (0.045 spent, 0"
                            + " reserved) of budget.max_cost 0.04; raise budget.max_cost in " + pipeline);
            assertThat(server.requestCount()).isEqualTo(3);
            String[] status = {"datagen", "status", "--pipeline", "spend", "--experiment", "e", "--durable-root", root};
            CliRunner.Result atBudget = cli.run(status);
            assertThat(atBudget.exitCode()).as(atBudget.err()).isZero();
            assertThat(atBudget.out())
                    .contains("budget max_cost 0.04  charged 0.045  spent 0.045  reserved 0  remaining 0  calls 3");
            JsonNode atBudgetJson =
                    JSON.readTree(cli.run(concat(status, "--json")).out());
            assertThat(atBudgetJson.get("budget").toString())
                    .isEqualTo("{\"calls\":3,\"charged\":\"0.045\",\"max_cost\":\"0.04\",\"remaining\":\"0\","
                            + "\"reserved\":\"0\",\"spent\":\"0.045\"}");
            // The budget is read from the control database: one that cannot be reached is exit 5, not a guess.
            CliRunner.Result unreachable = new CliRunner(
                            home, Map.of(), List.of("--control-db", "jdbc:postgresql://127.0.0.1:1/nothing"))
                    .run(status);
            assertThat(unreachable.exitCode()).as(unreachable.err()).isEqualTo(ExitCode.UNAVAILABLE);
            CliRunner.Result local = cli.run(concat(run, "--local-limits"));
            assertThat(local.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
            assertThat(local.err()).contains("--local-limits: pipeline spend has a budget");

            Files.writeString(pipeline, yaml.formatted("1", server.chatUrl()));
            CliRunner.Result done = cli.run(run);
            assertThat(done.exitCode()).as(done.err()).isZero();
            assertThat(server.requestCount()).isEqualTo(6);
            CliRunner.Result finished = cli.run(status);
            assertThat(finished.out())
                    .contains("items 6  completed 6")
                    .contains("usage requests 6")
                    .contains("budget max_cost 1  charged 0.09  spent 0.09  reserved 0  remaining 0.91  calls 6");
        }
    }

    private static String[] concat(String[] head, String... tail) {
        String[] all = java.util.Arrays.copyOf(head, head.length + tail.length);
        System.arraycopy(tail, 0, all, head.length, tail.length);
        return all;
    }
}
