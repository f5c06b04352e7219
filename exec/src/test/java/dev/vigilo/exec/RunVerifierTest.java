package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.ReceiptParser;
import dev.vigilo.exec.settlement.RunCancellation;
import dev.vigilo.exec.worker.TranscriptTest;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code vigilo verify} over a real settled run: intact when untouched; one flipped byte in a receipt, a transcript, a
 * chunk file or a dataset case file (each restored afterwards) is reported with that object's key; an altered figure
 * of the recorded gate table is reported with both figures.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunVerifierTest {
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");

    @TempDir
    static Path dir;

    ExecFixture fx;
    Placements placements;
    OpenAiTestServer llm;
    UUID run;

    @BeforeAll
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 250);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        llm = OpenAiTestServer.start();
        // Wrong for i % 5 == 0, a tool call for i % 7 == 0, errored (500) for i % 13 == 0, and one output long
        // enough to be stored apart.
        llm.answerWith(req -> {
            Matcher m = QUESTION.matcher(req.lastUserMessage());
            long i = m.find() ? Long.parseLong(m.group(1)) : -1;
            if (i % 13 == 0) {
                return OpenAiTestServer.Reply.error(500, "down");
            }
            if (i == 101) {
                return OpenAiTestServer.Reply.content("y".repeat(Receipt.INLINE_OUTPUT_BYTES + 5))
                        .withUsage(inputTokens(i), 2);
            }
            if (i % 7 == 0) {
                return OpenAiTestServer.Reply.toolCall("multiply", "{\"a\":" + i + "}")
                        .withUsage(inputTokens(i), 2);
            }
            return OpenAiTestServer.Reply.content(i % 5 == 0 ? "wrong" : Long.toString(i * 2))
                    .withUsage(inputTokens(i), 2);
        });
        run = fx.prepare("""
                name: verify
                agent: {kind: http, url: "%s", model: m, max_attempts: 2}
                pricing: {test: {input: 0.5, output: 1.5}}
                evaluators:
                  - {name: exact, kind: exact_match}
                  - {name: re, kind: regex, pattern: "^[0-9]+$", applies_to: {groups: [math]}}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                  - {name: math, required_evaluators: [exact, re], min_pass_rate: 0.5}
                """.formatted(llm.chatUrl()));
        new Admission(placements, fx.storage).admit(run);
        new Worker(placements, fx.storage, TranscriptTest.fast(4), Worker.Listener.NONE).run();
        assertThat(fx.runStatus(run)).isEqualTo("settled");
    }

    @AfterAll
    void tearDown() {
        llm.close();
        placements.close();
        fx.close();
    }

    /** The receipts the done chunk rows reference, in chunk order. */
    List<dev.vigilo.storage.ObjectRef> receipts() {
        return placements
                .jdbi(ExecutionConfig.CONTROL)
                .withHandle(h -> h.createQuery("SELECT receipt_key, receipt_length, receipt_sha256 FROM exec_chunks"
                                + " WHERE run_id = :r ORDER BY chunk_index")
                        .bind("r", run)
                        .map((rs, ctx) -> new dev.vigilo.storage.ObjectRef(
                                dev.vigilo.storage.ObjectKey.of(rs.getString(1)),
                                rs.getLong(2),
                                dev.vigilo.storage.Sha256.parseHex(rs.getString(3))))
                        .list());
    }

    RunVerifier.Report verify() {
        return new RunVerifier(placements, fx.storage).verify(run);
    }

    /** Flips one byte of the object at {@code key}, verifies, and restores the object. */
    RunVerifier.Report verifyWithFlippedByte(String key) throws IOException {
        Path file = fx.storeRoot.resolve(key);
        byte[] original = Files.readAllBytes(file);
        byte[] damaged = original.clone();
        damaged[damaged.length / 2] ^= 0x20;
        file.toFile().setWritable(true);
        Files.write(file, damaged);
        try {
            return verify();
        } finally {
            Files.write(file, original);
        }
    }

    @Test
    void anUntouchedRunIsIntactAndItsSettlementIsRecomputed() {
        RunVerifier.Report r = verify();
        assertThat(r.problem()).isEmpty();
        assertThat(r.intact()).isTrue();
        assertThat(r.damagedKey()).isEmpty();
        assertThat(r.checked().datasetCases()).isEqualTo(250);
        assertThat(r.checked().chunks()).isEqualTo(3);
        assertThat(r.checked().receipts()).isEqualTo(3);
        assertThat(r.checked().outputs()).isEqualTo(1);
        // 250 cases, the 20 errored ones (i % 13 == 0) made two attempts each
        assertThat(r.checked().transcripts()).isEqualTo(250 + 20);
        assertThat(r.checked().casesWithoutTranscripts()).isZero();
        long passed = 0;
        for (long i = 0; i < 250; i++) {
            if (i % 13 != 0 && i != 101 && i % 7 != 0 && i % 5 != 0) {
                passed++;
            }
        }
        assertThat(r.gates().get(0).passed()).isEqualTo(passed);
        assertThat(r.gates().get(0).errored()).isEqualTo(20);
        boolean allPass = r.gates().stream().allMatch(g -> g.passedGate().orElseThrow());
        assertThat(r.verdict()).contains(allPass ? "passed" : "failed");
    }

    @Test
    void aTamperedReceiptIsReportedWithItsKey() throws IOException {
        String key = receipts().get(1).key().value();
        RunVerifier.Report r = verifyWithFlippedByte(key);
        assertThat(r.intact()).isFalse();
        assertThat(r.damagedKey()).contains(key);
        assertThat(r.problem().orElseThrow()).contains(key);
    }

    @Test
    void aTamperedTranscriptIsReportedWithItsKey() throws IOException {
        Receipt r2 = ReceiptParser.fromJson(
                fx.store.read(receipts().get(2), Deadline.after(Duration.ofSeconds(10))), "receipt");
        // A transcript container of chunk 2 (its transcripts back to back): a byte flipped in its middle alters
        // one slice, which verify reports with the container's key and the slice's offset.
        String key = r2.cases().get(17).transcripts().get(0).ref().key().value();
        assertThat(key).contains("/0000000002/g");
        RunVerifier.Report r = verifyWithFlippedByte(key);
        assertThat(r.intact()).isFalse();
        assertThat(r.damagedKey()).contains(key);
        assertThat(r.problem().orElseThrow()).contains(key + " at offset ").contains("altered");
    }

    @Test
    void transcriptsSwappedBetweenTwoCasesWithTheirReferencesAreReportedForTheFirstOfThem() throws IOException {
        // Two cases of one transcript container, each with one attempt: their slices' references (offset, length,
        // SHA-256) swapped in the receipt, which is written again with the chunk row's reference to it. Every digest
        // matches and both slices are intact session logs of the right lease generation; only what each slice
        // names (its vigilo/case event) shows that it is the other case's.
        ObjectRef receiptRef = receipts().get(1);
        Receipt r =
                ReceiptParser.fromJson(fx.store.read(receiptRef, Deadline.after(Duration.ofSeconds(10))), "receipt");
        // Cases of one attempt by container, in ordinal order; the first container holding two of them.
        java.util.Map<String, List<Integer>> byContainer = new java.util.LinkedHashMap<>();
        for (int i = 0; i < r.cases().size(); i++) {
            Receipt.CaseResult c = r.cases().get(i);
            if (c.transcripts().size() == 1) {
                byContainer
                        .computeIfAbsent(c.transcripts().get(0).ref().key().value(), k -> new ArrayList<>())
                        .add(i);
            }
        }
        List<Integer> single = byContainer.values().stream()
                .filter(l -> l.size() >= 2)
                .findFirst()
                .orElseThrow()
                .subList(0, 2);
        assertThat(single).hasSize(2);
        Receipt.CaseResult a = r.cases().get(single.get(0));
        Receipt.CaseResult b = r.cases().get(single.get(1));
        Receipt.TranscriptRef ta = a.transcripts().get(0);
        Receipt.TranscriptRef tb = b.transcripts().get(0);
        assertThat(ta.offset()).isPresent();
        List<Receipt.CaseResult> cases = new ArrayList<>(r.cases());
        cases.set(single.get(0), a.withTranscripts(List.of(tb)));
        cases.set(single.get(1), b.withTranscripts(List.of(ta)));
        Receipt swapped = r.withCases(cases);
        byte[] bytes = ReceiptParser.toJson(swapped);
        Path file = fx.storeRoot.resolve(receiptRef.key().value());
        byte[] original = Files.readAllBytes(file);
        file.toFile().setWritable(true);
        Files.write(file, bytes);
        pointRowAt(r.chunkIndex(), bytes.length, Sha256.of(bytes));
        try {
            RunVerifier.Report report = verify();
            assertThat(report.intact()).isFalse();
            assertThat(report.damagedKey()).contains(tb.ref().key().value());
            assertThat(report.problem().orElseThrow())
                    .contains("case \"" + a.id() + "\" in receipt")
                    .contains(
                            tb.ref().key().value() + " at offset " + tb.offset().orElseThrow())
                    .contains("names case \"" + b.id() + "\"")
                    .doesNotContain("\n");
        } finally {
            Files.write(file, original);
            pointRowAt(r.chunkIndex(), receiptRef.length(), receiptRef.sha256());
        }
        assertThat(verify().intact()).isTrue();
    }

    @Test
    void wholeTranscriptObjectsSwappedBetweenTwoCasesAreReportedAsInReceiptsBeforeVersion8() throws IOException {
        // A run written with one object per transcript (receipt versions 2-7): the bytes of two cases' objects
        // swapped, their references' lengths and SHA-256 swapped with them; each key is still its case's.
        UUID old = fx.prepare("""
                name: objects
                agent: {kind: http, url: "%s", model: m, max_attempts: 2}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                """.formatted(llm.chatUrl()));
        new Admission(placements, fx.storage).admit(old);
        System.setProperty("vigilo.worker.transcriptObjects", "true");
        try {
            new Worker(placements, fx.storage, TranscriptTest.fast(4), Worker.Listener.NONE).run();
        } finally {
            System.clearProperty("vigilo.worker.transcriptObjects");
        }
        assertThat(fx.runStatus(old)).isEqualTo("settled");
        assertThat(new RunVerifier(placements, fx.storage).verify(old).intact()).isTrue();
        Receipt r = TranscriptTest.receipts(fx, placements, old).get(0);
        assertThat(new String(ReceiptParser.toJson(r), java.nio.charset.StandardCharsets.UTF_8))
                .contains("\"version\":4,");
        Receipt.CaseResult a = r.cases().get(1);
        Receipt.CaseResult b = r.cases().get(2);
        assertThat(a.transcripts()).hasSize(1);
        assertThat(b.transcripts()).hasSize(1);
        Receipt.TranscriptRef ta = a.transcripts().get(0);
        Receipt.TranscriptRef tb = b.transcripts().get(0);
        Path fa = fx.storeRoot.resolve(ta.ref().key().value());
        Path fb = fx.storeRoot.resolve(tb.ref().key().value());
        byte[] ba = Files.readAllBytes(fa);
        byte[] bb = Files.readAllBytes(fb);
        fa.toFile().setWritable(true);
        fb.toFile().setWritable(true);
        Files.write(fa, bb);
        Files.write(fb, ba);
        List<Receipt.CaseResult> cases = new ArrayList<>(r.cases());
        cases.set(
                1,
                a.withTranscripts(List.of(
                        new Receipt.TranscriptRef(1, new ObjectRef(ta.ref().key(), bb.length, Sha256.of(bb))))));
        cases.set(
                2,
                b.withTranscripts(List.of(
                        new Receipt.TranscriptRef(1, new ObjectRef(tb.ref().key(), ba.length, Sha256.of(ba))))));
        Receipt swapped = r.withCases(cases);
        byte[] bytes = ReceiptParser.toJson(swapped);
        Path file = fx.storeRoot.resolve(
                Receipt.key(old, r.chunkIndex(), r.leaseGeneration()).value());
        file.toFile().setWritable(true);
        Files.write(file, bytes);
        placements
                .jdbi(ExecutionConfig.CONTROL)
                .useHandle(h -> h.createUpdate("UPDATE exec_chunks SET receipt_length = :len, receipt_sha256 = :sha"
                                + " WHERE run_id = :r AND chunk_index = :c")
                        .bind("len", (long) bytes.length)
                        .bind("sha", Sha256.of(bytes).toHex())
                        .bind("r", old)
                        .bind("c", r.chunkIndex())
                        .execute());
        RunVerifier.Report report = new RunVerifier(placements, fx.storage).verify(old);
        assertThat(report.intact()).isFalse();
        assertThat(report.damagedKey()).contains(ta.ref().key().value());
        assertThat(report.problem().orElseThrow())
                .contains("case \"" + a.id() + "\" in receipt")
                .contains("transcript " + ta.ref().key().value())
                .contains("names case \"" + b.id() + "\"");
    }

    /** Sets the done chunk row's receipt length and SHA-256 (its key stays the receipt's). */
    private void pointRowAt(long chunk, long length, Sha256 sha256) {
        placements
                .jdbi(ExecutionConfig.CONTROL)
                .useHandle(h -> h.createUpdate("UPDATE exec_chunks SET receipt_length = :len, receipt_sha256 = :sha"
                                + " WHERE run_id = :r AND chunk_index = :c")
                        .bind("len", length)
                        .bind("sha", sha256.toHex())
                        .bind("r", run)
                        .bind("c", chunk)
                        .execute());
    }

    @Test
    void aTamperedChunkFileIsReportedWithItsKey() throws IOException {
        String key = fx.plan(run).manifest().chunkIndexRoot().key().value();
        List<String> chunkKeys = new ArrayList<>();
        fx.plan(run)
                .forEachChunk(
                        0,
                        Deadline.after(Duration.ofSeconds(10)),
                        c -> chunkKeys.add(c.ref().key().value()));
        assertThat(chunkKeys).hasSize(3).doesNotContain(key);
        RunVerifier.Report r = verifyWithFlippedByte(chunkKeys.get(1));
        assertThat(r.intact()).isFalse();
        assertThat(r.damagedKey()).contains(chunkKeys.get(1));
    }

    @Test
    void aTamperedCaseFileIsReportedWithItsKey() throws IOException {
        PublishedPlan plan = fx.plan(run);
        String caseFile;
        try (var files = Files.walk(fx.storeRoot.resolve("datasets/cases"))) {
            Path first = files.filter(Files::isRegularFile).sorted().findFirst().orElseThrow();
            caseFile = fx.storeRoot.relativize(first).toString();
        }
        assertThat(plan.manifest().cases()).isEqualTo(250);
        RunVerifier.Report r = verifyWithFlippedByte(caseFile);
        assertThat(r.intact()).isFalse();
        assertThat(r.damagedKey()).contains(caseFile);
    }

    /** The prompt tokens the endpoint reports for case {@code i}. */
    static long inputTokens(long i) {
        return 10 + i % 3;
    }

    @Test
    void usageIsSummedPricedRecordedAndVerified() {
        long calls = 0;
        long input = 0;
        long mathCalls = 0;
        for (long i = 0; i < 250; i++) {
            if (i % 13 != 0) { // the errored cases' 500s reported no usage
                calls++;
                input += inputTokens(i);
                mathCalls += i % 3 == 0 ? 1 : 0;
            }
        }
        // 0.5 per million input tokens, 1.5 per million output tokens (2 per call), exact
        java.math.BigDecimal cost = new java.math.BigDecimal("0.5")
                .multiply(java.math.BigDecimal.valueOf(input))
                .add(new java.math.BigDecimal("1.5").multiply(java.math.BigDecimal.valueOf(2 * calls)))
                .movePointLeft(6);
        ExecutionStatus status = new dev.vigilo.exec.view.ExecutionStatusReader(placements).status(run);
        UsageSummary all = status.runUsage().orElseThrow();
        assertThat(all.all().calls()).isEqualTo(calls);
        assertThat(all.all().inputTokens()).isEqualTo(input);
        assertThat(all.all().outputTokens()).isEqualTo(2 * calls);
        assertThat(all.all().costUsd().orElseThrow()).isEqualByComparingTo(cost);
        assertThat(all.agent()).isEqualTo(all.all());
        assertThat(all.judges().calls()).isZero();
        assertThat(all.unpricedModels()).isEmpty();
        assertThat(status.usage().get("math").all().calls()).isEqualTo(mathCalls);
        long rows = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT count(*) FROM run_usage WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(Long.class)
                        .one());
        assertThat(rows).as("settlement recorded the scopes *, all and math").isEqualTo(3);

        fx.control
                .jdbi()
                .useHandle(h -> h.execute(
                        "UPDATE run_usage SET cost_usd = cost_usd * 2 WHERE run_id = ? AND scope = '*'", run));
        try {
            RunVerifier.Report r = verify();
            assertThat(r.intact()).isFalse();
            assertThat(r.problem().orElseThrow())
                    .contains("the run records usage")
                    .contains("the receipts give");
        } finally {
            fx.control
                    .jdbi()
                    .useHandle(h -> h.execute(
                            "UPDATE run_usage SET cost_usd = cost_usd / 2 WHERE run_id = ? AND scope = '*'", run));
        }
        assertThat(verify().intact()).isTrue();
    }

    @Test
    void anAlteredGateFigureIsReportedWithBothFigures() {
        fx.control
                .jdbi()
                .useHandle(h -> h.execute(
                        "UPDATE run_gate_results SET passed = passed + 1, failed = failed - 1 WHERE run_id = ? AND gate_index = 1",
                        run));
        try {
            RunVerifier.Report r = verify();
            assertThat(r.intact()).isFalse();
            assertThat(r.damagedKey()).isEmpty();
            assertThat(r.problem().orElseThrow()).contains("gate math").contains("the receipts give");
        } finally {
            fx.control
                    .jdbi()
                    .useHandle(h -> h.execute(
                            "UPDATE run_gate_results SET passed = passed - 1, failed = failed + 1 WHERE run_id = ?"
                                    + " AND gate_index = 1",
                            run));
        }
        assertThat(verify().intact()).isTrue();
    }

    @Test
    void aRunThatHasNotEndedIsRefused() {
        UUID pending = fx.prepare();
        assertThatThrownBy(() -> new RunVerifier(placements, fx.storage).verify(pending))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("wait until it settles");
    }

    @Test
    void aCancelledRunIsRefusedAsEndedWithoutAResultNotAsUnsettled() {
        UUID cancelled = fx.prepare();
        new RunCancellation(placements).cancel(cancelled);
        assertThatThrownBy(() -> new RunVerifier(placements, fx.storage).verify(cancelled))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("run " + cancelled + " was cancelled")
                .hasMessageContaining("no gate table or verdict to check")
                .hasMessageContaining("vigilo run results " + cancelled)
                .hasMessageNotContaining("wait");
    }
}
