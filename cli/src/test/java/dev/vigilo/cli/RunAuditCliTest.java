package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo run transcript}, {@code vigilo run compare} and {@code vigilo verify} end to end, in-process, over two
 * runs executed by a real worker with a command agent that narrates its work through {@code VIGILO_EVENTS}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunAuditCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int CASES = 40;

    @TempDir
    static Path home;

    private CliRunner cli;
    private String controlDb;
    private String runA;
    private String runB;

    /** Answers i * 2, except: MODE a is wrong when i % 5 == 0; MODE b is wrong when i % 7 == 0. */
    private static final String AGENT = """
            #!/bin/sh
            n=$(sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
            answer=$((n * 2))
            if [ "$MODE" = a ] && [ $((n % 5)) -eq 0 ]; then answer=wrong; fi
            if [ "$MODE" = b ] && [ $((n % 7)) -eq 0 ]; then answer=wrong; fi
            {
              printf '%s\\n' '{"type":"reasoning","text":"Doubling '"$n"'.\\nCarefully."}'
              printf '%s\\n' '{"type":"tool_call","id":"c1","name":"double","arguments":{"n":'"$n"'}}'
              printf '%s\\n' '{"type":"tool_result","id":"c1","content":"'"$((n * 2))"'"}'
              printf '%s\\n' '{"type":"message","text":"'"$answer"'"}'
            } >> "$VIGILO_EVENTS"
            if [ "$n" -eq 39 ]; then
              # a long transcript: 2,000 tool calls and results (about 10,000 events, 40 batches of the log)
              awk 'BEGIN { for (i = 0; i < 2000; i++) {
                printf "{\\\"type\\\":\\\"tool_call\\\",\\\"id\\\":\\\"t%d\\\",\\\"name\\\":\\\"step\\\",\\\"arguments\\\":{\\\"i\\\":%d}}\\n", i, i
                printf "{\\\"type\\\":\\\"tool_result\\\",\\\"id\\\":\\\"t%d\\\",\\\"content\\\":\\\"done %d\\\"}\\n", i, i } }' >> "$VIGILO_EVENTS"
            fi
            printf '%s\\n' "$answer"
            """;

    private String profile(String mode, Path agent) {
        return """
                name: audit-%s
                agent: {kind: command, command: ["%s"], env: {MODE: %s}}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                """.formatted(mode, agent, mode);
    }

    private static final Pattern RUN_ID = Pattern.compile("run ([0-9a-f-]{36}) pending");

    private String create(String profile) {
        CliRunner.Result r = cli.run("run", "create", "--profile", profile, "--dataset-upload-id", uploadId);
        assertThat(r.exitCode()).as(r.err()).isZero();
        Matcher m = RUN_ID.matcher(r.out());
        assertThat(m.find()).as(r.out()).isTrue();
        return m.group(1);
    }

    private String uploadId;

    @BeforeAll
    void setUp() throws Exception {
        controlDb = TestPostgres.newDatabaseUrl();
        cli = new CliRunner(home, Map.of(), List.of("--control-db", controlDb));
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < CASES; i++) {
            cases.append("{\"id\":\"case-")
                    .append(i)
                    .append("\",\"input\":\"what is ")
                    .append(i)
                    .append(" * 2\",\"expected\":\"")
                    .append(i * 2)
                    .append("\"}\n");
        }
        Path file = home.resolve("cases.jsonl");
        Files.writeString(file, cases.toString());
        CliRunner.Result up = cli.run("dataset", "upload", file.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        uploadId = up.out().trim();
        Path agent = home.resolve("agent.sh");
        Files.writeString(agent, AGENT);
        Files.setPosixFilePermissions(agent, PosixFilePermissions.fromString("rwxr-xr-x"));
        runA = create(profile("a", agent));
        runB = create(profile("b", agent));
        Path objects = new Environment(Map.of(Environment.HOME_VARIABLE, home.toString()), home).defaultObjectStore();
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(controlDb));
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            Worker.Options options = new Worker.Options(
                    2,
                    true,
                    Duration.ofSeconds(20),
                    Duration.ofSeconds(2),
                    Duration.ofMillis(100),
                    Duration.ofMillis(200),
                    Duration.ofSeconds(5));
            new Worker(placements, StorageConfig.localDefault(objects), options, Worker.Listener.NONE).run();
        }
        for (String run : List.of(runA, runB)) {
            CliRunner.Result s = cli.run("run", "status", run, "--json");
            assertThat(JSON.readTree(s.out()).path("status").asText())
                    .as(s.out())
                    .isEqualTo("settled");
        }
    }

    @Test
    void transcriptRendersTheConversationOrStreamsItsEvents() throws Exception {
        CliRunner.Result t = cli.run("run", "transcript", runA, "case-3");
        assertThat(t.exitCode()).as(t.err()).isZero();
        assertThat(t.out())
                .contains("case \"case-3\" (ordinal 3, chunk 0) of run " + runA + ": attempt 1 of 1, answered")
                // a slice of one of chunk 0's transcript containers
                .containsPattern("transcript runs/" + runA
                        + "/transcripts/0000000000/g1-c[0-9]+\\.jsonl\\.zstd at byte [0-9]+ \\(")
                .contains("user: what is 3 * 2")
                .contains("assistant (agent.sh) reasoning: Doubling 3.\n  Carefully.")
                .contains("assistant (agent.sh) calls double [c1]: {\"n\":3}")
                .contains("tool result [c1]: 6")
                .contains("output: 6")
                .contains("── turn ended: completed")
                .contains("evaluator exact: passed (score 1.0)")
                .contains("gates: all passed");

        CliRunner.Result j = cli.run("run", "transcript", runA, "case-10", "--json");
        assertThat(j.exitCode()).as(j.err()).isZero();
        List<String> types = new ArrayList<>();
        for (String line : j.out().split("\n")) {
            types.add(JSON.readTree(line).path("type").asText());
        }
        assertThat(types).first().isEqualTo("vigilo/case");
        assertThat(types).contains("assistant/message", "tool/call", "tool/result", "vigilo/output", "vigilo/gates");
        assertThat(j.out()).contains("\"output\":\"wrong\"");

        CliRunner.Result attempt = cli.run("run", "transcript", runA, "case-3", "--attempt", "2");
        assertThat(attempt.exitCode()).isEqualTo(3);
        assertThat(attempt.err()).contains("made 1 attempts; choose 1 to 1");
        CliRunner.Result unknown = cli.run("run", "transcript", runA, "case-999");
        assertThat(unknown.exitCode()).isEqualTo(3);
        assertThat(unknown.err()).contains("no case with id \"case-999\"");
    }

    @Test
    void aLongTranscriptIsStreamedWhole() throws Exception {
        CliRunner.Result j = cli.run("run", "transcript", runA, "case-39", "--json");
        assertThat(j.exitCode()).as(j.err()).isZero();
        List<String> lines = j.out().lines().toList();
        long calls =
                lines.stream().filter(l -> l.contains("\"type\":\"tool/call\"")).count();
        long results = lines.stream()
                .filter(l -> l.contains("\"type\":\"tool/result\""))
                .count();
        // the case's own narration (one call) plus the 2,000 of the long run
        assertThat(calls).isEqualTo(2001);
        assertThat(results).isEqualTo(2001);
        long seq = -1;
        for (String line : lines) {
            long s = JSON.readTree(line).path("seq").asLong();
            assertThat(s).isGreaterThan(seq);
            seq = s;
        }
        assertThat(JSON.readTree(lines.get(lines.size() - 1)).path("type").asText())
                .isEqualTo("vigilo/gates");

        CliRunner.Result t = cli.run("run", "transcript", runA, "case-39");
        assertThat(t.exitCode()).as(t.err()).isZero();
        assertThat(t.out())
                .contains("calls step [t0]: {\"i\":0}")
                .contains("tool result [t1999]: done 1999")
                .contains("gates: all passed");
    }

    @Test
    void compareReportsPassRatesAndFlipsByCaseId() throws Exception {
        List<String> expected = new ArrayList<>();
        long passA = 0;
        long passB = 0;
        for (int i = 0; i < CASES; i++) {
            boolean a = i % 5 != 0;
            boolean b = i % 7 != 0;
            passA += a ? 1 : 0;
            passB += b ? 1 : 0;
            if (a != b) {
                expected.add("case-" + i + ":" + (a ? "pass_to_fail" : "fail_to_pass"));
            }
        }
        CliRunner.Result json = cli.run("run", "compare", runA, runB, "--json");
        assertThat(json.exitCode()).as(json.err()).isZero();
        JsonNode c = JSON.readTree(json.out());
        assertThat(c.path("same_dataset").asBoolean()).isTrue();
        JsonNode all = c.path("gates").get(0);
        assertThat(all.at("/a/passed").asLong()).isEqualTo(passA);
        assertThat(all.at("/b/passed").asLong()).isEqualTo(passB);
        assertThat(all.path("difference").asDouble()).isCloseTo((passB - passA) / (double) CASES, within(1e-12));
        List<String> flips = new ArrayList<>();
        for (JsonNode f : c.path("flips")) {
            flips.add(
                    f.path("case_id").asText() + ":" + f.at("/changes/0/change").asText());
        }
        assertThat(flips).containsExactlyElementsOf(expected);
        assertThat(c.at("/summary/compared").asLong()).isEqualTo(CASES);
        assertThat(c.at("/summary/flipped").asLong()).isEqualTo(expected.size());
        assertThat(c.at("/summary/only_in_a").asLong()).isZero();
        // Significance, counted apart: a_only passed in A only (i % 7 == 0, not i % 5 == 0), b_only the reverse;
        // the exact two-sided McNemar p-value 2 * sum_{i <= min} C(b + c, i) / 2^(b + c) in integers.
        long aOnly = 0;
        long bOnly = 0;
        for (int i = 0; i < CASES; i++) {
            boolean a = i % 5 != 0;
            boolean b = i % 7 != 0;
            aOnly += a && !b ? 1 : 0;
            bOnly += b && !a ? 1 : 0;
        }
        java.math.BigInteger tail = java.math.BigInteger.ZERO;
        java.math.BigInteger binomial = java.math.BigInteger.ONE;
        for (long i = 0; i <= Math.min(aOnly, bOnly); i++) {
            tail = tail.add(binomial);
            binomial = binomial.multiply(java.math.BigInteger.valueOf(aOnly + bOnly - i))
                    .divide(java.math.BigInteger.valueOf(i + 1));
        }
        double p = Math.min(
                1.0,
                new java.math.BigDecimal(tail.shiftLeft(1))
                        .divide(new java.math.BigDecimal(java.math.BigInteger.ONE.shiftLeft((int) (aOnly + bOnly))))
                        .doubleValue());
        assertThat(all.path("a_only").asLong()).isEqualTo(aOnly).isEqualTo(4);
        assertThat(all.path("b_only").asLong()).isEqualTo(bOnly).isEqualTo(6);
        assertThat(all.path("p_value").asDouble()).isCloseTo(p, within(1e-12));
        assertThat(all.path("paired").asLong()).isEqualTo(CASES);
        assertThat(all.path("paired_difference").asDouble()).isCloseTo((bOnly - aOnly) / (double) CASES, within(1e-12));
        assertThat(all.path("difference_ci_low").asDouble())
                .isLessThan(all.path("paired_difference").asDouble());
        assertThat(all.path("difference_ci_high").asDouble())
                .isGreaterThan(all.path("paired_difference").asDouble());
        assertThat(all.path("confidence").asDouble()).isEqualTo(0.95);
        assertThat(all.path("significant").asBoolean()).isEqualTo(p < 0.05).isFalse();
        assertThat(all.at("/a/decision").asText()).isEqualTo("passed");

        CliRunner.Result text = cli.run("run", "compare", runA, runB);
        assertThat(text.exitCode()).as(text.err()).isZero();
        assertThat(text.out())
                .contains("same dataset: cases matched by ordinal")
                .contains("case-5: all failed -> passed (fail_to_pass)")
                .contains("case-7: all passed -> failed (pass_to_fail)")
                .contains("compared " + CASES + " cases; flipped " + expected.size())
                .containsPattern("GATE\\s+PAIRED\\s+A ONLY\\s+B ONLY\\s+P VALUE\\s+DIFF\\s+CI OF DIFF\\s+SIGNIFICANT")
                .containsPattern(
                        "all\\s+40\\s+4\\s+6\\s+" + RunCompareCommand.pValue(p).replace(".", "\\.")
                                + "\\s+\\+5\\.0 pts\\s+95% \\[-[0-9.]+ pts, \\+[0-9.]+ pts\\]\\s+no\n");
        // the significance table comes after the flips, as the counts do
        assertThat(text.out().indexOf("P VALUE")).isGreaterThan(text.out().indexOf("case-7:"));
    }

    private static org.assertj.core.data.Offset<Double> within(double d) {
        return org.assertj.core.data.Offset.offset(d);
    }

    @Test
    void verifyPassesOnTheUntouchedRuns() throws Exception {
        CliRunner.Result ok = cli.run("verify", runA);
        assertThat(ok.exitCode()).as(ok.err()).isZero();
        assertThat(ok.out()).startsWith("intact: run " + runA + " settled, verdict passed: " + CASES + " cases");
        assertThat(ok.out()).contains("  gate all: " + (CASES - CASES / 5) + " passed, " + CASES / 5 + " failed");
        CliRunner.Result okJson = cli.run("verify", runA, "--json");
        assertThat(okJson.exitCode()).as(okJson.err()).isZero();
        JsonNode v = JSON.readTree(okJson.out());
        assertThat(v.path("intact").asBoolean()).isTrue();
        assertThat(v.path("status").asText()).isEqualTo("settled");
        assertThat(v.at("/checked/dataset_cases").asLong()).isEqualTo(CASES);
        assertThat(v.at("/checked/receipts").asLong()).isEqualTo(1);
        assertThat(v.at("/checked/transcripts").asLong()).isEqualTo(CASES);
        assertThat(v.path("damaged_key").isNull()).isTrue();
        assertThat(v.path("problem").isNull()).isTrue();
        assertThat(v.at("/gates/0/passed").asLong()).isEqualTo(CASES - CASES / 5);
        assertThat(v.at("/gates/0/decide").asText()).isEqualTo("point");
        assertThat(v.at("/gates/0/decision").asText()).isEqualTo("passed");
        assertThat(v.at("/gates/0/confidence").asDouble()).isEqualTo(0.95);
        assertThat(v.at("/gates/0/ci_low").asDouble()).isLessThan(0.8);
        assertThat(v.at("/gates/0/ci_high").asDouble()).isGreaterThan(0.8);
        assertThat(v.at("/gates/0/stderr").asDouble()).isCloseTo(Math.sqrt(0.8 * 0.2 / CASES), within(1e-12));
        assertThat(cli.run("verify", runB).exitCode()).isZero();
    }

    @Test
    void verifyNamesATamperedReceipt() throws Exception {
        // the chunk's final receipt; its partial receipts (receipts/partial/) are not part of a run that ran through
        assertTamperedObjectIsNamed(onlyFile("runs/" + runA + "/receipts", "0000000000-g1.json"));
    }

    @Test
    void verifyNamesATamperedTranscript() throws Exception {
        // A transcript container of chunk 0 (its cases' transcripts back to back): the first one written.
        String transcript;
        try (var files = Files.walk(objects().resolve("runs/" + runA + "/transcripts/0000000000"))) {
            transcript = files.filter(Files::isRegularFile)
                    .filter(f -> f.getFileName().toString().startsWith("g1-c1."))
                    .map(f -> objects().relativize(f).toString())
                    .findFirst()
                    .orElseThrow();
        }
        assertThat(transcript).endsWith(".jsonl.zstd");
        assertTamperedObjectIsNamed(transcript);
    }

    @Test
    void verifyNamesATamperedChunkFile() throws Exception {
        assertTamperedObjectIsNamed("plans/" + runA + "/chunks/0000000000.json");
    }

    @Test
    void verifyNamesATamperedCaseFile() throws Exception {
        assertTamperedObjectIsNamed(onlyFile("datasets/cases"));
    }

    @Test
    void verifyRefusesARunThatHasNotEnded() throws Exception {
        Path agent = home.resolve("agent.sh");
        String pending = create(profile("a", agent));
        CliRunner.Result r = cli.run("verify", pending);
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.err()).startsWith("vigilo: error: run " + pending + " is ").contains("wait until it settles");
        assertThat(r.err().lines().count()).isEqualTo(1);
        assertThat(cli.run("verify", "not-a-uuid").exitCode()).isEqualTo(3);
    }

    private Path objects() {
        return new Environment(Map.of(Environment.HOME_VARIABLE, home.toString()), home).defaultObjectStore();
    }

    /** The key of the one object file under {@code prefix} (searched recursively). */
    private String onlyFile(String prefix) throws Exception {
        return onlyFile(prefix, "");
    }

    /** The key of the one object file under {@code prefix} whose name starts with {@code name}. */
    private String onlyFile(String prefix, String name) throws Exception {
        try (var files = Files.walk(objects().resolve(prefix))) {
            List<Path> found = files.filter(Files::isRegularFile)
                    .filter(f -> f.getFileName().toString().startsWith(name))
                    .toList();
            assertThat(found).hasSize(1);
            return objects().relativize(found.get(0)).toString();
        }
    }

    /**
     * Flips one byte of the object at {@code key}: {@code verify} exits 1 and names it (text and {@code --json});
     * restored, the run verifies intact again.
     */
    private void assertTamperedObjectIsNamed(String key) throws Exception {
        Path file = objects().resolve(key);
        assertThat(file).isRegularFile();
        byte[] original = Files.readAllBytes(file);
        byte[] damaged = original.clone();
        damaged[damaged.length / 2] ^= 0x01;
        file.toFile().setWritable(true);
        Files.write(file, damaged);
        try {
            CliRunner.Result bad = cli.run("verify", runA);
            assertThat(bad.exitCode()).as(bad.err()).isEqualTo(1);
            assertThat(bad.out()).isEqualTo("DAMAGED: " + key + "\n");
            assertThat(bad.err()).startsWith("vigilo: error: ").contains(key);
            assertThat(bad.err().lines().count()).isEqualTo(1);
            CliRunner.Result json = cli.run("verify", runA, "--json");
            assertThat(json.exitCode()).isEqualTo(1);
            JsonNode report = JSON.readTree(json.out());
            assertThat(report.path("intact").asBoolean()).isFalse();
            assertThat(report.path("damaged_key").asText()).isEqualTo(key);
            assertThat(report.path("problem").asText()).contains(key);
            assertThat(report.path("gates")).isEmpty();
        } finally {
            Files.write(file, original);
        }
        assertThat(cli.run("verify", runA).exitCode()).isZero();
    }
}
