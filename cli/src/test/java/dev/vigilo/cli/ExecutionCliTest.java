package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo worker}, {@code run status|watch|results|cancel|move-shard} and {@code placement} in-process on a real
 * PostgreSQL and a local store, with real agent and evaluator processes: the everyday path, and every bad input of
 * execution (unknown run, cancelled run, unreachable execution database, agent not found, agent printing invalid
 * output, evaluator crash, tampered chunk file, tampered case file) with its one-line error and documented exit code.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ExecutionCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path home;

    private CliRunner cli;
    private String controlDb;
    private String uploadId;
    private Path answer;

    @BeforeAll
    void setUp() throws IOException {
        controlDb = TestPostgres.newDatabaseUrl();
        cli = new CliRunner(home, Map.of(), List.of("--control-db", controlDb));
        // Eight cases; the agent answers input.answer, which is wrong for cases 2 and 5. Cases 0..3 are "core".
        uploadId = upload("cases.jsonl", "c", 8);
        answer = Files.writeString(home.resolve("answer.sh"), ExecutedRun.ECHO_ANSWER);
    }

    private String upload(String name, String idPrefix, int n) throws IOException {
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < n; i++) {
            String given = i == 2 || i == 5 ? "wrong" : Integer.toString(i);
            cases.append("{\"id\":\"")
                    .append(idPrefix)
                    .append(i)
                    .append("\",\"input\":{\"answer\":\"")
                    .append(given)
                    .append("\"},\"expected\":\"")
                    .append(i)
                    .append("\"")
                    .append(i < 4 ? ",\"group\":\"core\"" : "")
                    .append("}\n");
        }
        Path file = Files.writeString(home.resolve(name), cases);
        CliRunner.Result up = cli.run("dataset", "upload", file.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        return up.out().trim();
    }

    private String profile(String name, String agentCommand, String extraEvaluator, String gates) {
        return """
                name: %s
                agent: {kind: command, command: %s, max_attempts: 1, timeout_seconds: 30}
                evaluators:
                  - {name: exact, kind: exact_match}
                %s
                gates:
                %s
                """.formatted(name, agentCommand, extraEvaluator, gates);
    }

    private String answering() {
        return "[sh, \"" + answer + "\"]";
    }

    private static final String MIXED_GATES = """
              - {name: all, required_evaluators: [exact], min_pass_rate: 0.7}
              - {name: core, required_evaluators: [exact], groups: [core], min_pass_rate: 1.0}
            """;

    /** {@code run create} with execution; returns the run id. */
    private String create(String profile, String dataset) {
        String runId = UUID.randomUUID().toString();
        CliRunner.Result r =
                cli.run("run", "create", "--profile", profile, "--dataset-upload-id", dataset, "--run-id", runId);
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("run " + runId + " pending");
        return runId;
    }

    private JsonNode status(String runId) throws IOException {
        CliRunner.Result r = cli.run("run", "status", runId, "--json");
        assertThat(r.exitCode()).as(r.err()).isZero();
        return JSON.readTree(r.out());
    }

    private JsonNode workUntilIdle() throws IOException {
        CliRunner.Result w = cli.run("worker", "--exit-when-idle", "--json", "--concurrency", "4");
        assertThat(w.exitCode()).as(w.err()).isZero();
        return JSON.readTree(w.out());
    }

    private List<JsonNode> results(String runId) throws IOException {
        CliRunner.Result r = cli.run("run", "results", runId);
        assertThat(r.exitCode()).as(r.err()).isZero();
        List<JsonNode> lines = new ArrayList<>();
        for (String line : r.out().lines().toList()) {
            lines.add(JSON.readTree(line));
        }
        return lines;
    }

    /** One line on stderr, the given exit code; returns the line. */
    private static String oneLine(CliRunner.Result r, int exitCode) {
        assertThat(r.exitCode()).as(r.err()).isEqualTo(exitCode);
        assertThat(r.err()).as(r.err()).startsWith("vigilo: error: ").hasLineCount(1);
        assertThat(r.err()).doesNotContain("\u001b", "\tat ", "Exception");
        return r.err().strip();
    }

    @Test
    void aWorkerExecutesRunsAndStatusWatchAndResultsShowTheOutcome() throws IOException {
        String mixed = create(profile("mixed", answering(), "", MIXED_GATES), uploadId);
        String passing = create(
                profile(
                        "passing",
                        answering(),
                        "",
                        "  - {name: all, required_evaluators: [exact], min_pass_rate: 0.7}\n"),
                uploadId);
        JsonNode before = status(mixed);
        assertThat(before.get("status").asText()).isEqualTo("pending");
        assertThat(before.has("creation_progress")).isTrue();
        assertThat(before.has("shards")).isTrue();
        assertThat(before.at("/execution/chunks_done").asLong()).isZero();
        assertThat(before.at("/execution/cases").asLong()).isEqualTo(8);
        assertThat(before.get("verdict").isNull()).isTrue();
        assertThat(before.at("/gates/0/passed_gate").isNull()).isTrue();
        assertThat(before.get("gates_final").asBoolean()).isFalse();

        JsonNode summary = workUntilIdle();
        assertThat(summary.get("stopped").asText()).isEqualTo("idle");
        assertThat(summary.get("cases_executed").asLong()).isEqualTo(16);
        assertThat(summary.get("settlements").asLong()).isEqualTo(2);

        JsonNode after = status(mixed);
        assertThat(after.get("status").asText()).isEqualTo("settled");
        assertThat(after.get("verdict").asText()).isEqualTo("failed");
        assertThat(after.at("/execution/chunks_done").asLong()).isEqualTo(1);
        assertThat(after.at("/execution/cases_done").asLong()).isEqualTo(8);
        assertThat(after.at("/execution/shards/0/cases_done").asLong()).isEqualTo(8);
        assertThat(after.at("/execution/shards/0/placement").asText()).isEqualTo("control");
        JsonNode all = after.at("/gates/0");
        assertThat(all.get("name").asText()).isEqualTo("all");
        assertThat(List.of(
                        all.get("planned").asLong(),
                        all.get("executed").asLong(),
                        all.get("passed").asLong(),
                        all.get("failed").asLong(),
                        all.get("errored").asLong()))
                .containsExactly(8L, 8L, 6L, 2L, 0L);
        assertThat(all.get("pass_rate").asDouble()).isEqualTo(0.75);
        assertThat(all.get("min_pass_rate").asDouble()).isEqualTo(0.7);
        assertThat(all.get("passed_gate").asBoolean()).isTrue();
        JsonNode core = after.at("/gates/1");
        assertThat(core.get("passed").asLong()).isEqualTo(3);
        assertThat(core.get("planned").asLong()).isEqualTo(4);
        assertThat(core.get("passed_gate").asBoolean()).isFalse();

        String text = cli.run("run", "status", mixed).out();
        assertThat(text)
                .contains("run " + mixed + ": settled")
                .contains("progress: 1 of 1 chunks done, 8 of 8 cases done")
                .contains("verdict: failed")
                .containsPattern(
                        "GATE\\s+PLANNED\\s+EXECUTED\\s+PASSED\\s+FAILED\\s+ERRORED\\s+PASS RATE\\s+95% CI\\s+MIN"
                                + " RATE\\s+RESULT")
                .containsPattern("all\\s+8\\s+8\\s+6\\s+2\\s+0\\s+75\\.0%\\s+\\[40\\.9%, 92\\.9%\\]\\s+70\\.0%\\s+PASS")
                .containsPattern(
                        "core\\s+4\\s+4\\s+3\\s+1\\s+0\\s+75\\.0%\\s+\\[30\\.1%, 95\\.4%\\]\\s+100\\.0%\\s+FAIL");

        CliRunner.Result watchFailed = cli.run("run", "watch", mixed);
        assertThat(watchFailed.exitCode()).isEqualTo(ExitCode.FAILED);
        assertThat(watchFailed.err()).contains("verdict failed", "gate core 75.0% < 100.0%");
        assertThat(JSON.readTree(watchFailed.out().lines().reduce((a, b) -> b).orElseThrow())
                        .get("verdict")
                        .asText())
                .isEqualTo("failed");
        CliRunner.Result watchPassed = cli.run("run", "watch", passing);
        assertThat(watchPassed.exitCode()).as(watchPassed.err()).isZero();

        List<JsonNode> lines = results(mixed);
        assertThat(lines).hasSize(8);
        for (int i = 0; i < 8; i++) {
            JsonNode n = lines.get(i);
            assertThat(n.get("case_id").asText()).isEqualTo("c" + i);
            assertThat(n.get("ordinal").asLong()).isEqualTo(i);
            assertThat(n.get("shard").asInt()).isZero();
            assertThat(n.get("attempts").asInt()).isEqualTo(1);
            boolean right = i != 2 && i != 5;
            assertThat(n.get("output").asText()).isEqualTo(right ? Integer.toString(i) : "wrong");
            assertThat(n.at("/evaluators/exact/passed").asBoolean()).isEqualTo(right);
            assertThat(n.at("/evaluators/exact/score").asDouble()).isEqualTo(right ? 1.0 : 0.0);
            assertThat(n.at("/evaluators/exact/error").isNull()).isTrue();
            assertThat(n.get("error").isNull()).isTrue();
        }

        // --out: written aside and renamed; an existing file is kept without --force; never a temporary file left.
        Path out = home.resolve("results.jsonl");
        CliRunner.Result written = cli.run("run", "results", mixed, "--out", out.toString());
        assertThat(written.exitCode()).as(written.err()).isZero();
        assertThat(written.out()).contains("wrote 8 results of 1 chunks");
        List<String> fileLines = Files.readAllLines(out, StandardCharsets.UTF_8);
        assertThat(fileLines).hasSize(8);
        assertThat(JSON.readTree(fileLines.get(0)).get("case_id").asText()).isEqualTo("c0");
        String refused = oneLine(cli.run("run", "results", passing, "--out", out.toString()), ExitCode.INVALID_INPUT);
        assertThat(refused).contains("already exists", "--force");
        assertThat(Files.readAllLines(out)).isEqualTo(fileLines);
        CliRunner.Result forced = cli.run("run", "results", passing, "--out", out.toString(), "--force");
        assertThat(forced.exitCode()).as(forced.err()).isZero();
        assertThat(Files.readString(out))
                .isEqualTo(cli.run("run", "results", passing).out());
        try (Stream<Path> files = Files.list(home)) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(f -> f.contains(".tmp"));
        }

        // A settled run has nothing to cancel, and cannot move.
        assertThat(oneLine(cli.run("run", "cancel", mixed), ExitCode.CONFLICT)).contains("already settled");
        assertThat(oneLine(cli.run("run", "move-shard", mixed, "0", "control"), ExitCode.CONFLICT))
                .contains(mixed);
    }

    @Test
    void aRunOfSeveralEpochsShowsItsEpochsInStatusResultsAndTranscripts() throws IOException {
        // The agent answers input.answer, except in epoch 2 for case c0 and in epochs 1 and 2 for c3 (c2 and c5 are
        // always wrong). So "all" passes 2, 3, 0, 1, 3, 0, 3, 3 epochs of c0..c7: histogram [2, 1, 1, 4].
        Path script = Files.writeString(home.resolve("epochs.sh"), """
                a=$(sed -n 's/.*"answer":"\\([^"]*\\)".*/\\1/p')
                if [ "$a" = 0 ] && [ "$VIGILO_EPOCH" = 2 ]; then echo wrong; exit 0; fi
                if [ "$a" = 3 ] && [ "$VIGILO_EPOCH" != 3 ]; then echo wrong; exit 0; fi
                echo "$a"
                """);
        String epochs = create(
                profile("epochs", "[sh, \"" + script + "\"]", "", MIXED_GATES)
                        + "epochs: {count: 3, reducer: majority}\n",
                uploadId);
        String single = create(profile("single", answering(), "", MIXED_GATES), uploadId);
        workUntilIdle();

        // status --json: pass@k per gate; the text: one pass@k line per gate under the table.
        JsonNode all = status(epochs).at("/gates/0");
        assertThat(List.of(all.get("passed").asLong(), all.get("failed").asLong()))
                .containsExactly(5L, 3L);
        assertThat(all.at("/pass_at_k/2").asDouble()).isCloseTo((2.0 / 3 + 5) / 8, within(1e-12));
        assertThat(all.at("/pass_at_k/3").asDouble()).isEqualTo(0.75);
        assertThat(status(single).at("/gates/0").has("pass_at_k")).isFalse();
        String text = cli.run("run", "status", epochs).out();
        assertThat(text)
                .containsPattern(
                        "\nall pass@k over 8 cases of 3 epochs: pass@1 0\\.6[23]  pass@2 0\\.71  pass@3 0\\.75\n")
                .containsPattern("core pass@k over 4 cases of 3 epochs: pass@1 0\\.50  pass@2 0\\.67  pass@3 0\\.75");
        assertThat(cli.run("run", "status", single).out()).doesNotContain("pass@");
        // watch off a terminal prints the JSON of status --json, pass@k included.
        CliRunner.Result watched = cli.run("run", "watch", epochs);
        assertThat(JSON.readTree(watched.out().lines().reduce((a, b) -> b).orElseThrow())
                        .at("/gates/0/pass_at_k/3")
                        .asDouble())
                .isEqualTo(0.75);

        // results: each case's epochs and how many passed each gate; a one-epoch run's lines have neither.
        List<JsonNode> lines = results(epochs);
        assertThat(lines).hasSize(8);
        JsonNode c0 = lines.get(0);
        assertThat(c0.get("output").isNull()).isTrue();
        assertThat(c0.get("attempts").asInt()).isEqualTo(3);
        assertThat(c0.at("/gates/all").asText()).isEqualTo("passed");
        assertThat(c0.at("/epoch_passes/all").asInt()).isEqualTo(2);
        assertThat(c0.at("/epoch_passes/core").asInt()).isEqualTo(2);
        assertThat(c0.get("epochs")).hasSize(3);
        assertThat(c0.at("/epochs/1/epoch").asInt()).isEqualTo(2);
        assertThat(c0.at("/epochs/1/outcome").asText()).isEqualTo("ok");
        assertThat(c0.at("/epochs/1/attempts").asInt()).isEqualTo(1);
        assertThat(c0.at("/epochs/1/output").asText()).isEqualTo("wrong");
        assertThat(c0.at("/epochs/1/evaluators/exact/passed").asBoolean()).isFalse();
        assertThat(c0.at("/epochs/1/gates/all").asText()).isEqualTo("failed");
        assertThat(c0.at("/epochs/1/error").isNull()).isTrue();
        assertThat(c0.at("/epochs/2/output").asText()).isEqualTo("0");
        JsonNode c3 = lines.get(3);
        assertThat(c3.at("/gates/all").asText()).isEqualTo("failed");
        assertThat(c3.at("/epoch_passes/all").asInt()).isEqualTo(1);
        assertThat(lines.get(4).get("epochs")).hasSize(3);
        assertThat(lines.get(4).get("epoch_passes").has("core")).isFalse();
        for (JsonNode n : results(single)) {
            assertThat(n.has("epochs")).isFalse();
            assertThat(n.has("epoch_passes")).isFalse();
        }
        // JUnit: the reduced case, with how many epochs passed.
        assertThat(cli.run("run", "results", epochs, "--format", "junit").out())
                .containsPattern("message=\"exact failed \\(score [0-9.]+\\) \\(1 of 3 epochs passed\\)\"")
                .contains("(0 of 3 epochs passed)");

        // transcript: the last epoch by default, --epoch E for another, nothing beyond the run's epochs.
        CliRunner.Result last = cli.run("run", "transcript", epochs, "c0");
        assertThat(last.exitCode()).as(last.err()).isZero();
        assertThat(last.out()).contains("epoch 3 of 3, attempt 1 of 1, answered");
        CliRunner.Result second = cli.run("run", "transcript", epochs, "c0", "--epoch", "2", "--json");
        assertThat(second.exitCode()).as(second.err()).isZero();
        JsonNode header = JSON.readTree(second.out().lines().findFirst().orElseThrow());
        assertThat(header.at("/data/epoch").asInt()).isEqualTo(2);
        assertThat(oneLine(cli.run("run", "transcript", epochs, "c0", "--epoch", "4"), ExitCode.INVALID_INPUT))
                .isEqualTo("vigilo: error: --epoch 4: run " + epochs + " ran each case 3 times (epochs); choose 1"
                        + " to 3");
        assertThat(oneLine(cli.run("run", "transcript", single, "c0", "--epoch", "2"), ExitCode.INVALID_INPUT))
                .contains("--epoch 2: run " + single + " ran each case once (one epoch); leave the epoch out or"
                        + " choose 1");
        CliRunner.Result one = cli.run("run", "transcript", single, "c0", "--epoch", "1");
        assertThat(one.exitCode()).as(one.err()).isZero();
        assertThat(one.out()).contains(": attempt 1 of 1, answered").doesNotContain("epoch 1 of");
    }

    /** z of 0.95, computed apart from the stats module (the 0.975 quantile of the standard normal). */
    private static final double Z95 = 1.959963984540054;

    /** The Wilson interval of x of n at z, from its formula (docs/execution.md, "Statistics"). */
    private static double[] wilson(long x, long n, double z) {
        double p = (double) x / n;
        double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
        double half = z * Math.sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / (1 + z * z / n);
        return new double[] {centre - half, centre + half};
    }

    @Test
    void aGateDecidedOnItsBoundEndsInconclusiveAndEveryViewSaysSo() throws IOException {
        // 6 of 8 pass "all": 75% with the 95% interval [40.9%, 92.9%], which holds 0.7: inconclusive. "core" (3 of 4
        // against 0.5, on the point rate) passes, so the run's verdict is inconclusive.
        String bound = create(profile("bound", answering(), "", """
                          - {name: all, required_evaluators: [exact], min_pass_rate: 0.7, decide: bound}
                          - {name: core, required_evaluators: [exact], groups: [core], min_pass_rate: 0.5}
                        """), uploadId);
        CliRunner.Result worker = cli.run("worker", "--exit-when-idle", "--json");
        assertThat(worker.exitCode()).as(worker.err()).isZero();
        // The worker's line about the run it settled: an inconclusive gate is never PASS or FAIL.
        assertThat(worker.err())
                .contains("run " + bound + " settled: verdict inconclusive (all INCONCLUSIVE 95% CI [40.9%, 92.9%]"
                        + " holds 70.0%, core PASS 75.0% >= 50.0%)");
        double[] ci = wilson(6, 8, Z95);
        // The smallest N with N (p - m)^2 >= z^2 m (1 - m): 0.8067 / 0.0025 = 322.7, so 323 cases at 75%.
        long toDecide = 9;
        while (toDecide * 0.05 * 0.05 < Z95 * Z95 * 0.7 * 0.3) {
            toDecide++;
        }
        assertThat(toDecide).isEqualTo(323);

        JsonNode st = status(bound);
        assertThat(st.get("status").asText()).isEqualTo("settled");
        assertThat(st.get("verdict").asText()).isEqualTo("inconclusive");
        JsonNode all = st.at("/gates/0");
        assertThat(all.get("decide").asText()).isEqualTo("bound");
        assertThat(all.get("decision").asText()).isEqualTo("inconclusive");
        assertThat(all.get("passed_gate").asBoolean()).isFalse();
        assertThat(all.get("confidence").asDouble()).isEqualTo(0.95);
        assertThat(all.get("ci_low").asDouble()).isCloseTo(ci[0], org.assertj.core.data.Offset.offset(1e-12));
        assertThat(all.get("ci_high").asDouble()).isCloseTo(ci[1], org.assertj.core.data.Offset.offset(1e-12));
        assertThat(all.get("stderr").asDouble())
                .isCloseTo(Math.sqrt(0.75 * 0.25 / 8), org.assertj.core.data.Offset.offset(1e-12));
        assertThat(all.get("cases_to_decide").asLong()).isEqualTo(toDecide);
        JsonNode core = st.at("/gates/1");
        assertThat(core.get("decide").asText()).isEqualTo("point");
        assertThat(core.get("decision").asText()).isEqualTo("passed");
        assertThat(core.has("cases_to_decide")).isFalse();

        // Text: the interval column, INCONCLUSIVE (never PASS or FAIL), and how many cases would decide it.
        String text = cli.run("run", "status", bound).out();
        assertThat(text)
                .contains("verdict: inconclusive")
                .containsPattern(
                        "all\\s+8\\s+8\\s+6\\s+2\\s+0\\s+75\\.0%\\s+\\[40\\.9%, 92\\.9%\\]\\s+70\\.0%\\s+INCONCLUSIVE\n")
                .containsPattern(
                        "core\\s+4\\s+4\\s+3\\s+1\\s+0\\s+75\\.0%\\s+\\[30\\.1%, 95\\.4%\\]\\s+50\\.0%\\s+PASS\n")
                .contains("all is inconclusive: its 95% CI [40.9%, 92.9%] holds its minimum 70.0%; 323 cases at the"
                        + " observed 75.0% (315 more than the 8 planned) would pass it");

        // run watch: exit 1, naming the verdict and the gate on stderr.
        CliRunner.Result watch = cli.run("run", "watch", bound);
        assertThat(watch.exitCode()).as(watch.err()).isEqualTo(ExitCode.FAILED);
        assertThat(watch.err())
                .contains("settled with verdict inconclusive: gate all 95% CI [40.9%, 92.9%] holds 70.0% (323 cases"
                        + " at this rate would decide it, 315 more)")
                .doesNotContain("core");
        assertThat(JSON.readTree(watch.out().lines().reduce((a, b) -> b).orElseThrow())
                        .get("verdict")
                        .asText())
                .isEqualTo("inconclusive");

        // verify recomputes the same decision and interval, and says so in both forms.
        CliRunner.Result verify = cli.run("verify", bound, "--json");
        assertThat(verify.exitCode()).as(verify.err()).isZero();
        JsonNode v = JSON.readTree(verify.out());
        assertThat(v.get("verdict").asText()).isEqualTo("inconclusive");
        JsonNode vAll = v.at("/gates/0");
        for (String key : List.of("stderr", "ci_low", "ci_high", "confidence", "decide", "decision")) {
            assertThat(vAll.get(key)).as(key).isEqualTo(all.get(key));
        }
        assertThat(v.at("/gates/1/decision").asText()).isEqualTo("passed");
        CliRunner.Result verifyText = cli.run("verify", bound);
        assertThat(verifyText.exitCode()).as(verifyText.err()).isZero();
        assertThat(verifyText.out())
                .contains(", verdict inconclusive:")
                .contains("  gate all: 6 passed, 2 failed, 0 errored of 8 planned (75.0%, 95% CI [40.9%, 92.9%],"
                        + " minimum 70.0%, decided on the bound): inconclusive")
                .contains("  gate core: 3 passed, 1 failed, 0 errored of 4 planned (75.0%, 95% CI [30.1%, 95.4%],"
                        + " minimum 50.0%, decided on the point rate): passed");
    }

    @Test
    void agentAndEvaluatorFailuresSettleTheRunWithTheirErrorsInTheResults() throws IOException {
        Path invalid = Files.writeString(home.resolve("invalid.sh"), "cat >/dev/null; echo '{\"output\": 5}'\n");
        String gate = "  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}\n";
        String notFound = create(profile("not-found", "[no-such-agent-vigilo-test]", "", gate), uploadId);
        String invalidOutput = create(profile("invalid-output", "[sh, \"" + invalid + "\"]", "", gate), uploadId);
        String crash = create(
                profile(
                        "evaluator-crash",
                        answering(),
                        "  - {name: judge, kind: command, command: [sh, -c, \"cat >/dev/null; echo judged >&2; exit 3\"]}",
                        "  - {name: judged, required_evaluators: [judge], min_pass_rate: 0.5}\n"),
                uploadId);

        JsonNode summary = workUntilIdle();
        assertThat(summary.get("cases_executed").asLong()).isEqualTo(24);
        assertThat(summary.get("chunks_failed").asLong()).isZero();

        Map<String, String> agentErrors = new LinkedHashMap<>();
        agentErrors.put(notFound, "agent_not_found");
        agentErrors.put(invalidOutput, "invalid_output");
        for (var e : agentErrors.entrySet()) {
            JsonNode s = status(e.getKey());
            assertThat(s.get("status").asText()).as(e.getValue()).isEqualTo("settled");
            assertThat(s.get("verdict").asText()).isEqualTo("failed");
            assertThat(s.at("/gates/0/errored").asLong()).isEqualTo(8);
            for (JsonNode line : results(e.getKey())) {
                assertThat(line.get("status").asText()).isEqualTo("errored");
                assertThat(line.get("output").isNull()).isTrue();
                assertThat(line.at("/error/type").asText()).isEqualTo(e.getValue());
                assertThat(line.at("/error/message").asText()).isNotBlank();
            }
        }
        JsonNode crashed = status(crash);
        assertThat(crashed.get("status").asText()).isEqualTo("settled");
        assertThat(crashed.at("/gates/0/errored").asLong()).isEqualTo(8);
        for (JsonNode line : results(crash)) {
            assertThat(line.get("error").isNull()).isTrue();
            assertThat(line.get("output").isTextual()).isTrue();
            assertThat(line.at("/evaluators/judge/passed").asBoolean()).isFalse();
            assertThat(line.at("/evaluators/judge/error/type").asText()).isEqualTo("evaluator_crashed");
            assertThat(line.at("/gates/judged").asText()).isEqualTo("errored");
        }
    }

    @Test
    void unknownRunsAreRefusedByEveryRunCommand() {
        String unknown = UUID.randomUUID().toString();
        for (List<String> args : List.of(
                List.of("run", "status", unknown),
                List.of("run", "watch", unknown),
                List.of("run", "cancel", unknown),
                List.of("run", "results", unknown),
                List.of("run", "move-shard", unknown, "0", "control"))) {
            String line = oneLine(cli.run(args.toArray(String[]::new)), ExitCode.INVALID_INPUT);
            assertThat(line).as(args.toString()).contains(unknown).contains("no such run");
        }
        Path out = home.resolve("never.jsonl");
        oneLine(cli.run("run", "results", unknown, "--out", out.toString()), ExitCode.INVALID_INPUT);
        assertThat(out).doesNotExist();
    }

    @Test
    void aCancelledRunStaysCancelledKeepsItsShardsAndListsWhatItCommitted() throws IOException {
        String run = create(profile("cancelled", answering(), "", MIXED_GATES), uploadId);
        CliRunner.Result cancel = cli.run("run", "cancel", run);
        assertThat(cancel.exitCode()).as(cancel.err()).isZero();
        assertThat(cancel.out()).contains("run " + run + " cancelled");
        CliRunner.Result again = cli.run("run", "cancel", run);
        assertThat(again.exitCode()).as(again.err()).isZero();
        assertThat(again.out()).contains("already cancelled");

        String moved = oneLine(cli.run("run", "move-shard", run, "0", "control"), ExitCode.CONFLICT);
        assertThat(moved).contains("cancelled");
        JsonNode s = status(run);
        assertThat(s.get("status").asText()).isEqualTo("cancelled");
        assertThat(s.at("/execution/shards/0/placement").asText()).isEqualTo("control");
        assertThat(s.at("/execution/shards/0/state").asText()).isEqualTo("tombstoned");
        assertThat(s.get("verdict").isNull()).isTrue();

        CliRunner.Result results = cli.run("run", "results", run);
        assertThat(results.exitCode()).as(results.err()).isZero();
        assertThat(results.out()).isEmpty(); // nothing was committed, and nothing is invented
        CliRunner.Result watch = cli.run("run", "watch", run);
        assertThat(watch.exitCode()).isEqualTo(ExitCode.FAILED);
        assertThat(watch.err()).contains("was cancelled");
        // Recreating a cancelled run is refused: a delayed creator cannot reopen it.
        CliRunner.Result recreate = cli.run(
                "run",
                "create",
                "--profile",
                profile("cancelled", answering(), "", MIXED_GATES),
                "--dataset-upload-id",
                uploadId,
                "--run-id",
                run);
        assertThat(oneLine(recreate, ExitCode.CONFLICT)).contains("cancelled");
    }

    @Test
    void statusSaysWhatTheRunsWorkersWaitFor() throws IOException {
        String run = create(profile("waiting", answering(), "", MIXED_GATES), uploadId);
        assertThat(status(run).path("waiting")).isEmpty();
        // What a worker publishes while its database is out (exec's WaitBoard, docs/execution.md "Outages").
        String worker = UUID.randomUUID().toString();
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(controlDb))) {
            control.jdbi()
                    .useHandle(h -> h.execute(
                            "INSERT INTO exec_worker_waits (worker_id, service, target, since, last_error) VALUES"
                                    + " (?::uuid, 'database', 'control', '2026-01-02T03:04:05Z', 'lease renewal failed:"
                                    + " connection refused\nsecond line')",
                            worker));
        }
        String text = cli.run("run", "status", run).out();
        assertThat(text)
                .contains("waiting for the database since 2026-01-02T03:04:05Z (control, 1 worker): lease renewal"
                        + " failed: connection refused second line\n");
        JsonNode w = status(run).path("waiting");
        assertThat(w).hasSize(1);
        assertThat(w.get(0).path("for").asText()).isEqualTo("database");
        assertThat(w.get(0).path("target").asText()).isEqualTo("control");
        assertThat(w.get(0).path("since").asText()).isEqualTo("2026-01-02T03:04:05Z");
        assertThat(w.get(0).path("workers").asInt()).isEqualTo(1);
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(controlDb))) {
            control.jdbi().useHandle(h -> h.execute("DELETE FROM exec_worker_waits WHERE worker_id = ?::uuid", worker));
        }
        assertThat(cli.run("run", "status", run).out()).doesNotContain("waiting for");
        assertThat(cli.run("run", "cancel", run).exitCode()).isZero();
    }

    @Test
    void anUnreachableExecutionDatabaseIsNamedInOneLine() throws IOException {
        String run = create(profile("unreachable", answering(), "", MIXED_GATES), uploadId);
        Path config = Files.writeString(home.resolve("execution.toml"), """
                [placements.control]

                [placements.eu-1]
                jdbc_url = "jdbc:postgresql://127.0.0.1:1/nowhere?user=vigilo"
                """);
        String[] withConfig = {"--execution-config", config.toString()};
        for (List<String> args : List.of(
                List.of("run", "status", run), List.of("run", "results", run), List.of("worker", "--exit-when-idle"))) {
            List<String> all = new ArrayList<>(List.of(withConfig));
            all.addAll(args);
            String line = oneLine(cli.run(all.toArray(String[]::new)), ExitCode.UNAVAILABLE);
            assertThat(line).as(args.toString()).contains("execution database \"eu-1\"");
        }
        CliRunner.Result list = cli.run(withConfig[0], withConfig[1], "placement", "list");
        assertThat(list.exitCode()).as(list.err()).isZero();
        assertThat(list.out()).containsPattern("control\\s+active\\s+reaches it");
        assertThat(list.out()).containsPattern("eu-1\\s+-\\s+cannot reach it: .*\"eu-1\"");
        // The run has no shard there: cancelling it works in full.
        CliRunner.Result cancel = cli.run(withConfig[0], withConfig[1], "run", "cancel", run);
        assertThat(cancel.exitCode()).as(cancel.err()).isZero();
        assertThat(status(run).get("status").asText()).isEqualTo("cancelled");
    }

    @Test
    void aChunkFileAlteredAfterPublicationFailsAdmissionAndTheRun() throws IOException {
        String profile = profile("tampered-chunk", answering(), "", MIXED_GATES);
        String run = UUID.randomUUID().toString();
        CliRunner.Result held = cli.run(
                "run",
                "create",
                "--profile",
                profile,
                "--dataset-upload-id",
                uploadId,
                "--run-id",
                run,
                "--prepare-only");
        assertThat(held.exitCode()).as(held.err()).isZero();
        CliRunner.Result watchHeld = cli.run("run", "watch", run);
        assertThat(watchHeld.exitCode()).as(watchHeld.err()).isZero();
        assertThat(cli.run("run", "status", run).out()).contains("execution: not requested");
        flipAByte(home.resolve("objects/plans/" + run + "/chunks/0000000000.json"), "\"cases\"");

        CliRunner.Result create =
                cli.run("run", "create", "--profile", profile, "--dataset-upload-id", uploadId, "--run-id", run);
        assertThat(oneLine(create, ExitCode.FAILED)).contains("0000000000.json");
        JsonNode s = status(run);
        assertThat(s.get("status").asText()).isEqualTo("failed");
        assertThat(s.get("failure_reason").asText()).contains("0000000000.json");
        assertThat(s.get("verdict").isNull()).isTrue();
        assertThat(cli.run("run", "status", run).out())
                .contains("failure reason: ")
                .contains("0000000000.json");
    }

    @Test
    void aCaseFileAlteredAfterAdmissionFailsItsChunkAndTheRun() throws IOException {
        String dataset = upload("tampered.jsonl", "tampered-" + UUID.randomUUID() + "-", 8);
        String run = create(profile("tampered-case", answering(), "", MIXED_GATES), dataset);
        Path caseFile;
        try (Stream<Path> files = Files.walk(home.resolve("objects/datasets/cases"))) {
            caseFile = files.filter(Files::isRegularFile)
                    .filter(f -> read(f).contains("tampered-"))
                    .findFirst()
                    .orElseThrow();
        }
        flipAByte(caseFile, "\"answer\"");

        JsonNode summary = workUntilIdle();
        assertThat(summary.get("chunks_failed").asLong()).isEqualTo(1);
        JsonNode s = status(run);
        assertThat(s.get("status").asText()).isEqualTo("failed");
        assertThat(s.get("failure_reason").asText()).contains("chunk 0");
        assertThat(s.at("/execution/chunks_failed").asLong()).isEqualTo(1);
        CliRunner.Result watch = cli.run("run", "watch", run);
        assertThat(watch.exitCode()).isEqualTo(ExitCode.FAILED);
        assertThat(watch.err()).contains("failed: ").contains("chunk 0");
        assertThat(results(run)).isEmpty();
    }

    /** Changes one byte just after {@code marker}: same length, other content. */
    private static void flipAByte(Path file, String marker) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        int at = new String(bytes, StandardCharsets.ISO_8859_1).indexOf(marker);
        assertThat(at).as(file + " contains " + marker).isNotNegative();
        bytes[at + marker.length() + 2] ^= 1;
        file.toFile().setWritable(true);
        Files.write(file, bytes);
    }

    private static String read(Path f) {
        try {
            return Files.readString(f, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
