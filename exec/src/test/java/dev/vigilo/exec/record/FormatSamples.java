package dev.vigilo.exec.record;

import dev.vigilo.agent.TokenUsage;
import dev.vigilo.llm.Pricing;
import dev.vigilo.plan.Profile;
import dev.vigilo.stats.Confidence;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Fixed receipts and run snapshots whose bytes, as the format's writer produced them before the parser classes, are
 * kept under {@code src/test/resources/dev/vigilo/exec/record/} ({@code FormatCompatibilityTest}).
 */
final class FormatSamples {
    private FormatSamples() {}

    static final UUID RUN = UUID.fromString("0b0e2c1a-6a1f-4c5e-9d1e-1f2a3b4c5d6e");
    static final UUID CHUNK = UUID.fromString("5f0c6a2e-1b2c-4d3e-8f4a-5b6c7d8e9f00");
    static final UUID WORKER = UUID.fromString("c3d2e1f0-0a1b-4c2d-9e3f-405162738495");
    static final UUID UPLOAD = UUID.fromString("9a8b7c6d-5e4f-4a3b-8c2d-1e0f2a3b4c5d");

    static Sha256 sha(String text) {
        return Sha256.of(text.getBytes(StandardCharsets.UTF_8));
    }

    static ObjectRef ref(String key, long length) {
        return new ObjectRef(ObjectKey.of(key), length, sha(key));
    }

    /** Three cases: inline output with two attempts, an output stored apart, an errored agent; two gates. */
    static Receipt receipt() {
        Map<String, Receipt.GateOutcome> bothPassed = new LinkedHashMap<>();
        bothPassed.put("all", Receipt.GateOutcome.PASSED);
        bothPassed.put("math", Receipt.GateOutcome.PASSED);
        Receipt.CaseResult inline = new Receipt.CaseResult(
                700,
                "case-700",
                sha("case-700"),
                false,
                Optional.of("1400 \"quoted\" ünïcode"),
                Optional.empty(),
                24,
                Optional.of(sha("1400")),
                2,
                12,
                Optional.empty(),
                List.of(
                        new Receipt.EvaluatorResult("exact", true, 1.0, Optional.empty(), 0),
                        new Receipt.EvaluatorResult("re", true, 0.75, Optional.empty(), 3)),
                bothPassed,
                List.of(
                        new Receipt.TranscriptRef(
                                1, ref("runs/" + RUN + "/transcripts/0000000007/700-a1-g2.jsonl.zstd", 1234)),
                        new Receipt.TranscriptRef(
                                2, ref("runs/" + RUN + "/transcripts/0000000007/700-a2-g2.jsonl.zstd", 987))));
        Receipt.CaseResult apart = new Receipt.CaseResult(
                701,
                "case-701",
                sha("case-701"),
                false,
                Optional.empty(),
                Optional.of(ref("runs/" + RUN + "/outputs/" + sha("long").toHex() + ".txt", 70000)),
                70000,
                Optional.of(sha("long")),
                1,
                40,
                Optional.empty(),
                List.of(new Receipt.EvaluatorResult(
                        "exact", false, 0.0, Optional.of(new Receipt.Error("evaluator_error", "no match: x")), 1)),
                Map.of("all", Receipt.GateOutcome.ERRORED),
                List.of(new Receipt.TranscriptRef(
                        1, ref("runs/" + RUN + "/transcripts/0000000007/701-a1-g2.jsonl.zstd", 55))));
        Receipt.CaseResult errored = new Receipt.CaseResult(
                702,
                "case-702",
                sha("case-702"),
                true,
                Optional.empty(),
                Optional.empty(),
                0,
                Optional.empty(),
                3,
                30012,
                Optional.of(new Receipt.Error("timeout", "the agent did not answer within 10s")),
                List.of(),
                Map.of("all", Receipt.GateOutcome.ERRORED),
                List.of());
        return new Receipt(
                RUN,
                7,
                CHUNK,
                7,
                2,
                WORKER,
                sha("membership"),
                Instant.parse("2026-11-30T10:00:00.123Z"),
                Instant.parse("2026-11-30T10:00:04.456789Z"),
                List.of("exact", "re"),
                List.of("all", "math"),
                List.of(inline, apart, errored));
    }

    /** One execution of case 800 in epoch {@code epoch}: inline output, passing or failing "exact" with a score. */
    private static Receipt.CaseResult epochOf(long ordinal, int epoch, boolean passed, double score) {
        String output = passed ? "1600" : "16OO";
        Map<String, Receipt.GateOutcome> gates = new LinkedHashMap<>();
        gates.put("all", passed ? Receipt.GateOutcome.PASSED : Receipt.GateOutcome.FAILED);
        return new Receipt.CaseResult(
                ordinal,
                "case-" + ordinal,
                sha("case-" + ordinal),
                false,
                Optional.of(output),
                Optional.empty(),
                4,
                Optional.of(sha(output)),
                1,
                10 + epoch,
                Optional.empty(),
                List.of(new Receipt.EvaluatorResult("exact", passed, score, Optional.empty(), epoch)),
                gates,
                List.of(new Receipt.TranscriptRef(
                        1,
                        ref(
                                "runs/" + RUN + "/transcripts/0000000008/" + ordinal + "-e" + epoch
                                        + "-a1-g1.jsonl.zstd",
                                100 + epoch))));
    }

    /**
     * A version 3 receipt: two cases of three epochs reduced by majority, one passing two epochs of three, one
     * erroring in its third.
     */
    static Receipt epochReceipt() {
        EpochReduction reduction = new EpochReduction(
                new EpochReduction.Policy(3, dev.vigilo.stats.Reducer.MAJORITY),
                Map.of("exact", 1.0),
                Map.of("all", List.of("exact")));
        Receipt.CaseResult twoOfThree = reduction.reduce(
                List.of(epochOf(800, 1, true, 1.0), epochOf(800, 2, false, 0.0), epochOf(800, 3, true, 1.0)));
        Receipt.CaseResult e3 = new Receipt.CaseResult(
                801,
                "case-801",
                sha("case-801"),
                true,
                Optional.empty(),
                Optional.empty(),
                0,
                Optional.empty(),
                2,
                20000,
                Optional.of(new Receipt.Error("timeout", "the agent did not answer within 10s")),
                List.of(),
                Map.of("all", Receipt.GateOutcome.ERRORED),
                List.of(
                        new Receipt.TranscriptRef(
                                1, ref("runs/" + RUN + "/transcripts/0000000008/801-e3-a1-g1.jsonl.zstd", 70)),
                        new Receipt.TranscriptRef(
                                2, ref("runs/" + RUN + "/transcripts/0000000008/801-e3-a2-g1.jsonl.zstd", 71))));
        Receipt.CaseResult erroredInThird =
                reduction.reduce(List.of(epochOf(801, 1, true, 1.0), epochOf(801, 2, true, 1.0), e3));
        return new Receipt(
                RUN,
                8,
                CHUNK,
                8,
                1,
                WORKER,
                sha("membership-8"),
                Instant.parse("2026-12-02T07:00:00Z"),
                Instant.parse("2026-12-02T07:00:09.5Z"),
                List.of("exact"),
                List.of("all"),
                List.of(twoOfThree, erroredInThird));
    }

    static final Pricing PRICING = Pricing.of(Map.of(
            "agent-model",
            new Pricing.Price(new BigDecimal("0.15"), new BigDecimal("0.6"), new BigDecimal("0.075")),
            "judge-model",
            new Pricing.Price(new BigDecimal("2.5"), new BigDecimal("10"), new BigDecimal("2.5"))));

    private static TokenUsage tokens(String model, long in, long out, long cached) {
        return new TokenUsage(model, in, out, in + out, cached);
    }

    /** {@code c} with reasons on its passed and failed evaluator results. */
    private static Receipt.CaseResult withReasons(Receipt.CaseResult c) {
        List<Receipt.EvaluatorResult> results = c.evaluatorResults().stream()
                .map(e -> new Receipt.EvaluatorResult(
                        e.name(),
                        e.passed(),
                        e.score(),
                        e.error(),
                        e.millis(),
                        e.error().isPresent()
                                ? Optional.empty()
                                : Optional.of(e.passed() ? "matched `1400`" : "expected `1400`, got `14OO` \"…\""),
                        // "re" stands for a panel here: two judges' votes, one unscored.
                        e.name().equals("re")
                                ? List.of(
                                        new Receipt.Vote("a", Optional.of(0.75), Optional.of("close")),
                                        new Receipt.Vote("b", Optional.empty(), Optional.of("unscored: no score")))
                                : List.of()))
                .toList();
        return new Receipt.CaseResult(
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
                results,
                c.gates(),
                c.transcripts(),
                c.epochs(),
                c.usage());
    }

    /**
     * A version 4 receipt: {@link #receipt()}'s cases with reasons and usage: agent and judge calls priced (cached
     * input tokens included), an agent model without a price, and an errored case whose failed attempts reported
     * tokens.
     */
    static Receipt usageReceipt() {
        Receipt r = receipt();
        List<Receipt.CaseResult> cases = List.of(
                withReasons(r.cases().get(0))
                        .withUsage(Optional.of(Receipt.Usage.of(
                                List.of(tokens("agent-model", 120, 8, 0), tokens("agent-model", 1200, 30, 1000)),
                                List.of(tokens("judge-model", 400, 60, 0)),
                                PRICING))),
                withReasons(r.cases().get(1))
                        .withUsage(Optional.of(
                                Receipt.Usage.of(List.of(tokens("unpriced-model", 10, 5, 0)), List.of(), PRICING))),
                r.cases()
                        .get(2)
                        .withUsage(Optional.of(Receipt.Usage.of(
                                List.of(tokens("agent-model", 100, 0, 0), tokens("agent-model", 100, 0, 0)),
                                List.of(),
                                PRICING))));
        return new Receipt(
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
    }

    /** A slice of transcript container {@code container} of chunk 7: {@code length} bytes at {@code offset}. */
    static Receipt.TranscriptRef slice(int attempt, String container, long offset, long length) {
        String key = "runs/" + RUN + "/transcripts/0000000007/" + container + ".jsonl.zstd";
        return new Receipt.TranscriptRef(
                attempt,
                new ObjectRef(ObjectKey.of(key), length, sha(key + "@" + offset)),
                java.util.OptionalLong.of(offset));
    }

    /**
     * A version 8 receipt: {@link #usageReceipt()} whose case 700's two attempts are slices of container
     * {@code g2-c1} (back to back from offset 0), case 701's transcript a whole object (an entry of an older build,
     * as a resumed chunk may carry) and case 702 (errored, no transcripts) unchanged; no rerun, not resumed.
     */
    static Receipt sliceReceipt() {
        Receipt r = usageReceipt();
        List<Receipt.CaseResult> cases = List.of(
                r.cases().get(0).withTranscripts(List.of(slice(1, "g2-c1", 0, 1234), slice(2, "g2-c1", 1234, 987))),
                r.cases().get(1),
                r.cases().get(2));
        return new Receipt(
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
                cases,
                Optional.empty(),
                Optional.empty());
    }

    /**
     * A version 2 partial receipt: link 2 of generation 1's chain, cases 701 and 702 of {@link #usageReceipt()}, 701's
     * transcript a slice of container {@code g1-c2} at offset 4096.
     */
    static PartialReceipt slicePartialReceipt() {
        Receipt r = usageReceipt();
        return new PartialReceipt(
                r.runId(),
                r.chunkIndex(),
                r.chunkId(),
                r.shard(),
                1,
                r.worker(),
                r.membership(),
                1,
                1,
                2,
                Optional.of(ref("runs/" + r.runId() + "/receipts/partial/0000000007-g1-p1.json", 2048)),
                Instant.parse("2026-12-03T01:00:00.5Z"),
                List.of(
                        r.cases().get(1).withTranscripts(List.of(slice(1, "g1-c2", 4096, 55))),
                        r.cases().get(2)));
    }

    /** A version 4 receipt of epochs: {@link #epochReceipt()}'s, each epoch with its agent's tokens. */
    static Receipt usageEpochReceipt() {
        EpochReduction reduction = new EpochReduction(
                new EpochReduction.Policy(3, dev.vigilo.stats.Reducer.MAJORITY),
                Map.of("exact", 1.0),
                Map.of("all", List.of("exact")));
        List<Receipt.CaseResult> cases = new java.util.ArrayList<>();
        for (Receipt.CaseResult c : epochReceipt().cases()) {
            List<Receipt.CaseResult> epochs = new java.util.ArrayList<>();
            for (int i = 0; i < c.epochs().size(); i++) {
                epochs.add(withReasons(c.epochs().get(i))
                        .withUsage(Optional.of(
                                Receipt.Usage.of(List.of(tokens("agent-model", 50 + i, 4, 0)), List.of(), PRICING))));
            }
            cases.add(reduction.reduce(epochs));
        }
        Receipt r = epochReceipt();
        return new Receipt(
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
    }

    /** The snapshot of a run of three epochs (version 3). */
    static RunSnapshot epochSnapshot() {
        RunSnapshot s = snapshot();
        return new RunSnapshot(
                s.runId(),
                s.planRoot(),
                s.configuration(),
                s.storageBinding(),
                s.datasetUploadId(),
                s.cases(),
                s.chunks(),
                3,
                s.gates());
    }

    static RunSnapshot snapshot() {
        return new RunSnapshot(
                RUN,
                ref("plans/" + RUN + "/manifest.json", 4096),
                ref("plans/" + RUN + "/configuration.yaml", 512),
                "local:/var/lib/vigilo/store",
                UPLOAD,
                1000,
                10,
                1,
                List.of(
                        new RunSnapshot.Gate(
                                "all", List.of("exact"), 0.9, Profile.Decide.POINT, Confidence.DEFAULT, 1000),
                        new RunSnapshot.Gate(
                                "math", List.of("exact", "re"), 0.5, Profile.Decide.POINT, Confidence.DEFAULT, 120)));
    }
}
