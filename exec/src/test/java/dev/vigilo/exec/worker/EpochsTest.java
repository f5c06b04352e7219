package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.ReceiptParser;
import dev.vigilo.exec.record.TranscriptStore;
import dev.vigilo.exec.view.CaseResults;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.view.JunitReport;
import dev.vigilo.exec.view.RunResults;
import dev.vigilo.exec.view.RunTranscripts;
import dev.vigilo.storage.Sha256;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs of several epochs executed by a real worker with a command agent whose answers depend on its
 * {@code VIGILO_EPOCH}: every case is executed exactly {@code count} times, each epoch with its own transcripts, the
 * epochs reduce by the profile's reducer, the gate table carries the epoch pass histograms and pass@k, and
 * {@code vigilo verify} recomputes all of it and catches a forged epoch. Expected values are computed here from the
 * agent's rule, case by case, with exact binomial coefficients.
 */
class EpochsTest {
    private static final int CASES = 130;
    private static final int EPOCHS = 3;

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, CASES);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        placements.close();
        fx.close();
    }

    /** Whether the agent answers case n right in epoch e (the rule the script below implements). */
    static boolean right(long n, int e) {
        if (n % 10 == 7) {
            return true;
        }
        if (n % 10 == 4) {
            return false;
        }
        return (n + e) % 4 < 2;
    }

    /** Whether the agent fails case n in epoch e (every attempt). */
    static boolean errors(long n, int e) {
        return n % 17 == 5 && e == 2;
    }

    private Path agent() throws IOException {
        Path agent = dir.resolve("agent.sh");
        Files.writeString(agent, """
                #!/bin/sh
                n=$(sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
                e="$VIGILO_EPOCH"
                if [ $((n % 17)) -eq 5 ] && [ "$e" -eq 2 ]; then echo "no answer in epoch $e" >&2; exit 3; fi
                if [ $((n % 10)) -eq 7 ]; then echo $((n * 2)); exit 0; fi
                if [ $((n % 10)) -eq 4 ]; then echo wrong; exit 0; fi
                if [ $(((n + e) % 4)) -lt 2 ]; then echo $((n * 2)); else echo wrong; fi
                """);
        Files.setPosixFilePermissions(agent, PosixFilePermissions.fromString("rwxr-xr-x"));
        return agent;
    }

    private String profile(Path agent) {
        return """
                name: epochs
                agent: {kind: command, command: ["%s"]}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                  - {name: math, required_evaluators: [exact], groups: [math], min_pass_rate: 0.9}
                epochs: {count: %d, reducer: majority}
                """.formatted(agent, EPOCHS);
    }

    private UUID executed() throws IOException {
        UUID run = fx.prepare(profile(agent()));
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, TranscriptTest.fast(4), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
        return run;
    }

    /** pass@k of one case, 1 - C(n - c, k) / C(n, k), exactly. */
    static BigDecimal passAt(int n, int c, int k) {
        return BigDecimal.ONE.subtract(
                new BigDecimal(binomial(n - c, k)).divide(new BigDecimal(binomial(n, k)), MathContext.DECIMAL128));
    }

    static BigInteger binomial(int n, int k) {
        if (k < 0 || k > n) {
            return BigInteger.ZERO;
        }
        BigInteger b = BigInteger.ONE;
        for (int i = 0; i < k; i++) {
            b = b.multiply(BigInteger.valueOf(n - i)).divide(BigInteger.valueOf(i + 1));
        }
        return b;
    }

    @Test
    void everyCaseRunsEachEpochOnceAndTheEpochsReduceIntoTheGateTable() throws Exception {
        UUID run = executed();
        List<Receipt> receipts = TranscriptTest.receipts(fx, placements, run);
        assertThat(receipts).hasSize(2);
        // Expected per gate: outcomes of the reduced cases and the epoch pass histogram of those not errored.
        long[][] outcomes = new long[2][3];
        long[][] histogram = new long[2][EPOCHS + 1];
        int seen = 0;
        long transcripts = 0;
        for (Receipt r : receipts) {
            assertThat(r.epochCount()).isEqualTo(EPOCHS);
            for (Receipt.CaseResult c : r.cases()) {
                seen++;
                long n = c.ordinal();
                assertThat(c.epochs()).hasSize(EPOCHS);
                boolean errored = false;
                int passes = 0;
                int attempts = 0;
                for (int e = 1; e <= EPOCHS; e++) {
                    Receipt.CaseResult epoch = c.epochs().get(e - 1);
                    assertThat(epoch.errored()).as("case %d epoch %d", n, e).isEqualTo(errors(n, e));
                    if (errors(n, e)) {
                        errored = true;
                        assertThat(epoch.error().orElseThrow().message()).contains("no answer in epoch " + e);
                    } else {
                        assertThat(epoch.gates().get("all") == Receipt.GateOutcome.PASSED)
                                .as("case %d epoch %d", n, e)
                                .isEqualTo(right(n, e));
                        passes += right(n, e) ? 1 : 0;
                    }
                    // Each epoch has its own attempts (a failing one is retried: three attempts by default) and a
                    // transcript per attempt, under its own key, naming its epoch.
                    assertThat(epoch.attempts()).isEqualTo(errors(n, e) ? 3 : 1);
                    attempts += epoch.attempts();
                    assertThat(epoch.transcripts()).hasSize(epoch.attempts());
                    for (int a = 1; a <= epoch.attempts(); a++) {
                        Receipt.TranscriptRef ref = epoch.transcripts().get(a - 1);
                        assertThat(ref.offset()).isPresent();
                        assertThat(TranscriptStore.isContainerKey(
                                        ref.ref().key(), run, r.chunkIndex(), r.leaseGeneration()))
                                .isTrue();
                    }
                    Receipt.TranscriptRef t = epoch.transcripts().get(0);
                    if (n == 3) {
                        Path log = Files.createTempDirectory(dir, "t").resolve("session.jsonl.zstd");
                        Files.write(log, ChunkRows.readTranscript(fx.store, t, "transcript"));
                        JsonNode header = TranscriptTest.events(log).get(0);
                        assertThat(header.at("/data/epoch").asInt()).isEqualTo(e);
                        assertThat(header.at("/data/v").asInt()).isEqualTo(2);
                    }
                }
                assertThat(c.transcripts()).isEmpty();
                assertThat(c.output()).isEmpty();
                assertThat(c.attempts()).isEqualTo(attempts);
                transcripts += attempts;
                assertThat(c.errored()).isEqualTo(errored);
                if (errored) {
                    assertThat(c.error().orElseThrow().message()).startsWith("epoch 2 of 3: ");
                }
                for (int g = 0; g < 2; g++) {
                    String gate = g == 0 ? "all" : "math";
                    if (g == 1 && n % 3 != 0) {
                        assertThat(c.gates()).doesNotContainKey(gate);
                        continue;
                    }
                    Receipt.GateOutcome expected = errored
                            ? Receipt.GateOutcome.ERRORED
                            : 2 * passes > EPOCHS ? Receipt.GateOutcome.PASSED : Receipt.GateOutcome.FAILED;
                    assertThat(c.gates().get(gate))
                            .as("case %d gate %s", n, gate)
                            .isEqualTo(expected);
                    outcomes[g][expected.ordinal()]++;
                    if (!errored) {
                        histogram[g][passes]++;
                        assertThat(c.epochPasses()).containsEntry(gate, passes);
                    }
                }
            }
        }
        assertThat(seen).isEqualTo(CASES);

        ExecutionStatus status = new ExecutionStatusReader(placements).status(run);
        String json = status.toJson();
        for (int g = 0; g < 2; g++) {
            GateResult gate = status.gates().get(g);
            assertThat(gate.passed()).isEqualTo(outcomes[g][0]);
            assertThat(gate.failed()).isEqualTo(outcomes[g][1]);
            assertThat(gate.errored()).isEqualTo(outcomes[g][2]);
            assertThat(gate.passAtK().orElseThrow().histogram()).isEqualTo(histogram[g]);
            long cases = outcomes[g][0] + outcomes[g][1];
            Map<String, Double> expected = new LinkedHashMap<>();
            for (int k = 1; k <= EPOCHS; k++) {
                BigDecimal sum = BigDecimal.ZERO;
                for (int c = 0; c <= EPOCHS; c++) {
                    sum = sum.add(passAt(EPOCHS, c, k).multiply(BigDecimal.valueOf(histogram[g][c])));
                }
                double value = sum.divide(BigDecimal.valueOf(cases), MathContext.DECIMAL128)
                        .doubleValue();
                assertThat(gate.passAtKByK().get(Integer.toString(k))).isCloseTo(value, Offset.offset(1e-12));
                expected.put(Integer.toString(k), gate.passAtKByK().get(Integer.toString(k)));
            }
            StringBuilder object = new StringBuilder("\"pass_at_k\":{");
            expected.forEach((k, v) ->
                    object.append('"').append(k).append("\":").append(v).append(','));
            object.setCharAt(object.length() - 1, '}');
            assertThat(json).contains(object);
        }
        // pass@3 of a gate counts the cases with any passing epoch; pass@1 the mean share of passing epochs.
        assertThat(status.gates().get(0).passAtK().orElseThrow().passAt(1))
                .isLessThan(status.gates().get(0).passAtK().orElseThrow().passAt(EPOCHS));

        RunVerifier.Report report = new RunVerifier(placements, fx.storage).verify(run);
        assertThat(report.problem()).isEmpty();
        assertThat(report.intact()).isTrue();
        assertThat(report.gates()).isEqualTo(status.gates());
        assertThat(report.checked().transcripts()).isEqualTo(transcripts).isGreaterThan((long) CASES * EPOCHS);
    }

    @Test
    void verifyCatchesAForgedEpochEvenWhenTheRowsWereForgedToMatch() throws Exception {
        UUID run = executed();
        Receipt r = TranscriptTest.receipts(fx, placements, run).get(0);
        // Case 0 (n % 4 == 0): only epoch 1 passes, so majority fails. Forge epoch 2 into a pass: its evaluator and
        // its gate outcomes agree, the receipt's epoch_passes and tallies are rewritten by the writer, the chunk row
        // is updated to the forged receipt; only the reduction no longer matches.
        Receipt.CaseResult c = r.cases().get(0);
        assertThat(c.epochPasses()).containsEntry("all", 1);
        Receipt.CaseResult e2 = c.epochs().get(1);
        Map<String, Receipt.GateOutcome> passed = new LinkedHashMap<>();
        e2.gates().keySet().forEach(g -> passed.put(g, Receipt.GateOutcome.PASSED));
        Receipt.CaseResult forgedEpoch = new Receipt.CaseResult(
                e2.ordinal(),
                e2.id(),
                e2.caseSha256(),
                false,
                e2.output(),
                e2.outputRef(),
                e2.outputLength(),
                e2.outputSha256(),
                e2.attempts(),
                e2.agentMillis(),
                e2.error(),
                List.of(new Receipt.EvaluatorResult("exact", true, 1.0, java.util.Optional.empty(), 0)),
                passed,
                e2.transcripts(),
                List.of(),
                e2.usage());
        List<Receipt.CaseResult> epochs = new ArrayList<>(c.epochs());
        epochs.set(1, forgedEpoch);
        Receipt.CaseResult forgedCase = new Receipt.CaseResult(
                c.ordinal(),
                c.id(),
                c.caseSha256(),
                c.errored(),
                c.output(),
                c.outputRef(),
                c.outputLength(),
                c.outputSha256(),
                c.attempts(),
                c.agentMillis(),
                c.error(),
                c.evaluatorResults(),
                c.gates(),
                c.transcripts(),
                epochs,
                c.usage());
        List<Receipt.CaseResult> cases = new ArrayList<>(r.cases());
        cases.set(0, forgedCase);
        Receipt forged = new Receipt(
                r.runId(),
                r.chunkIndex(),
                r.chunkId(),
                r.shard(),
                r.leaseGeneration(),
                r.worker(),
                r.membership(),
                r.startedAt(),
                r.finishedAt(),
                r.evaluators(),
                r.gates(),
                cases);
        byte[] bytes = ReceiptParser.toJson(forged);
        assertThat(ReceiptParser.fromJson(bytes, "forged").cases().get(0).epochPasses())
                .containsEntry("all", 2);
        String key = Receipt.key(run, r.chunkIndex(), r.leaseGeneration()).value();
        Path file = fx.storeRoot.resolve(key);
        file.toFile().setWritable(true);
        Files.write(file, bytes);
        ChunkTables.Tallies t = ChunkTables.Tallies.of(forged);
        placements
                .jdbi(ExecutionConfig.CONTROL)
                .useHandle(h -> h.createUpdate("UPDATE exec_chunks SET receipt_length = :len, receipt_sha256 = :sha,"
                                + " gate_epoch_passes = :h WHERE run_id = :r AND chunk_index = :c")
                        .bind("len", (long) bytes.length)
                        .bind("sha", Sha256.of(bytes).toHex())
                        .bind("h", t.epochPasses())
                        .bind("r", run)
                        .bind("c", r.chunkIndex())
                        .execute());

        RunVerifier.Report report = new RunVerifier(placements, fx.storage).verify(run);
        assertThat(report.intact()).isFalse();
        assertThat(report.problem().orElseThrow())
                .contains("case \"case-0\"")
                .contains("its epochs reduce (majority)")
                .contains("gate all failed")
                .contains("gate all passed");
        assertThat(new String(bytes, StandardCharsets.UTF_8)).contains("\"version\":8"); // transcript slices
    }

    @Test
    void resultsCasePagesTranscriptsAndJunitShowEveryEpoch() throws Exception {
        UUID run = executed();
        Map<Long, Receipt.CaseResult> receipted = new LinkedHashMap<>();
        for (Receipt r : TranscriptTest.receipts(fx, placements, run)) {
            r.cases().forEach(c -> receipted.put(c.ordinal(), c));
        }
        ObjectMapper json = new ObjectMapper();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new RunResults(placements, fx.storage).write(run, out);
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertThat(lines).hasSize(CASES);
        for (String line : lines) {
            JsonNode c = json.readTree(line);
            long n = c.get("ordinal").asLong();
            List<String> keys = new ArrayList<>();
            c.fieldNames().forEachRemaining(keys::add);
            assertThat(keys)
                    .containsExactly(
                            "case_id",
                            "ordinal",
                            "shard",
                            "chunk",
                            "status",
                            "attempts",
                            "output",
                            "evaluators",
                            "gates",
                            "error",
                            "usage",
                            "epoch_passes",
                            "epochs");
            assertThat(c.get("output").isNull()).isTrue();
            int passes = 0;
            int attempts = 0;
            assertThat(c.get("epochs")).hasSize(EPOCHS);
            for (int e = 1; e <= EPOCHS; e++) {
                JsonNode epoch = c.get("epochs").get(e - 1);
                List<String> epochKeys = new ArrayList<>();
                epoch.fieldNames().forEachRemaining(epochKeys::add);
                assertThat(epochKeys)
                        .containsExactly(
                                "epoch", "outcome", "attempts", "output", "evaluators", "gates", "error", "usage");
                assertThat(epoch.get("epoch").asInt()).isEqualTo(e);
                assertThat(epoch.get("outcome").asText()).isEqualTo(errors(n, e) ? "errored" : "ok");
                assertThat(epoch.get("attempts").asInt()).isEqualTo(errors(n, e) ? 3 : 1);
                attempts += epoch.get("attempts").asInt();
                String gate = errors(n, e) ? "errored" : right(n, e) ? "passed" : "failed";
                assertThat(epoch.at("/gates/all").asText())
                        .as("case %d epoch %d", n, e)
                        .isEqualTo(gate);
                assertThat(epoch.has("gates") && epoch.get("gates").has("math")).isEqualTo(n % 3 == 0);
                if (errors(n, e)) {
                    assertThat(epoch.get("output").isNull()).isTrue();
                    assertThat(epoch.at("/error/message").asText()).contains("no answer in epoch " + e);
                } else {
                    assertThat(epoch.get("output").asText())
                            .isEqualTo(receipted
                                    .get(n)
                                    .epochs()
                                    .get(e - 1)
                                    .output()
                                    .orElseThrow());
                    assertThat(epoch.at("/evaluators/exact/passed").asBoolean()).isEqualTo(right(n, e));
                    assertThat(epoch.get("error").isNull()).isTrue();
                    passes += right(n, e) ? 1 : 0;
                }
            }
            assertThat(c.get("attempts").asInt()).isEqualTo(attempts);
            assertThat(c.at("/epoch_passes/all").asInt()).as("case %d", n).isEqualTo(passes);
            assertThat(c.get("epoch_passes").has("math")).isEqualTo(n % 3 == 0);
        }

        // The case page: each epoch's result, output and transcripts; the reduced case has none of its own.
        try (CaseResults pages = new CaseResults(placements, fx.storage)) {
            CaseResults.CaseDetail d = pages.find(run, 5).orElseThrow();
            Receipt.CaseResult c = receipted.get(5L);
            assertThat(d.transcripts()).isEmpty();
            assertThat(d.output()).isEmpty();
            assertThat(d.result().epochs()).isEqualTo(EPOCHS);
            assertThat(d.result().epochPasses()).isEqualTo(c.epochPasses());
            assertThat(d.epochs()).extracting(CaseResults.EpochDetail::epoch).containsExactly(1, 2, 3);
            CaseResults.EpochDetail second = d.epochs().get(1);
            assertThat(second.result().outcome()).isEqualTo(CaseResults.Outcome.ERRORED);
            assertThat(second.result().attempts()).isEqualTo(3);
            assertThat(second.output()).isEmpty();
            assertThat(second.transcripts())
                    .extracting(RunTranscripts.Attempt::attempt)
                    .containsExactly(1, 2, 3);
            assertThat(d.epochs().get(0).output()).isEqualTo(c.epochs().get(0).output());
            assertThat(d.epochs().get(0).transcripts().get(0).transcript())
                    .isEqualTo(c.epochs().get(0).transcripts().get(0).ref());
        }

        // run transcript: the last epoch by default, any epoch of the run by number, nothing beyond.
        RunTranscripts reader = new RunTranscripts(placements, fx.storage);
        RunTranscripts.CaseTranscripts found = reader.find(run, "case-5");
        assertThat(found.epochCount()).isEqualTo(EPOCHS);
        assertThat(found.attempts()).isEmpty();
        assertThat(found.epoch(Optional.empty()).epoch()).isEqualTo(EPOCHS);
        RunTranscripts.Epoch second = found.epoch(Optional.of(2));
        assertThat(second.errored()).isTrue();
        assertThat(second.attempts()).hasSize(3);
        ByteArrayOutputStream events = new ByteArrayOutputStream();
        assertThat(reader.write(run, second.attempt(3).orElseThrow(), events).accepted())
                .isTrue();
        JsonNode header = json.readTree(
                events.toString(StandardCharsets.UTF_8).lines().findFirst().orElseThrow());
        assertThat(header.at("/data/epoch").asInt()).isEqualTo(2);
        assertThat(header.at("/data/case_id").asText()).isEqualTo("case-5");
        assertThatThrownBy(() -> found.epoch(Optional.of(4)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("epoch 4: run " + run + " ran each case 3 times (epochs); choose 1 to 3");
        assertThatThrownBy(() -> found.epoch(Optional.of(0))).isInstanceOf(InvalidInputException.class);
        // A run of one epoch has epoch 1 only.
        assertThat(RunTranscripts.epoch(run, 1, Optional.empty())).isEqualTo(1);
        assertThatThrownBy(() -> RunTranscripts.epoch(run, 1, Optional.of(2)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("ran each case once (one epoch); leave the epoch out or choose 1");

        // JUnit: the reduced case, its failure saying how many epochs passed (case 0 passes only epoch 1).
        ByteArrayOutputStream xml = new ByteArrayOutputStream();
        new JunitReport(placements, fx.storage).write(run, xml);
        assertThat(xml.toString(StandardCharsets.UTF_8))
                .containsPattern("name=\"case-0\".*\\n?.*message=\"exact failed \\(score [0-9.]+\\) \\(1 of 3 epochs"
                        + " passed\\)\"")
                .contains("(0 of 3 epochs passed)");
    }
}
