package dev.vigilo.exec.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The parsers read what the writers before them wrote, and write the same bytes: the resources beside this class were
 * written by {@code Receipt.encode} and {@code RunSnapshot.encode} before {@link ReceiptParser} and
 * {@link RunSnapshotParser} existed (the version 1 receipt is the version 2 one without its transcript lists). The
 * version 3 receipt (epochs) was written by the build before reasons and usage; the version 4 files pin the bytes
 * this build writes, so a later build keeps reading and writing them.
 */
class FormatCompatibilityTest {
    static byte[] resource(String name) throws IOException {
        try (InputStream in = FormatCompatibilityTest.class.getResourceAsStream(name)) {
            assertThat(in).as(name).isNotNull();
            return in.readAllBytes();
        }
    }

    @Test
    void aVersion2ReceiptReadsWithoutReasonsOrUsage() throws IOException {
        byte[] written = resource("receipt-v2.json");
        Receipt r = ReceiptParser.fromJson(written, "receipt-v2.json");
        assertThat(r).isEqualTo(FormatSamples.receipt());
        assertThat(r.cases()).allSatisfy(c -> assertThat(c.usage()).isEmpty());
    }

    @Test
    void aVersion4ReceiptReadsAndIsWrittenByteForByte() throws IOException {
        byte[] written = resource("receipt-v4.json");
        Receipt r = ReceiptParser.fromJson(written, "receipt-v4.json");
        assertThat(r).isEqualTo(FormatSamples.usageReceipt());
        assertThat(ReceiptParser.toJson(r)).isEqualTo(written);
        Receipt.Usage first = r.cases().get(0).usage().orElseThrow();
        // agent: 1320 input (1000 cached), 38 output at 0.15 / 0.075 / 0.6 per million; judge: 400 in, 60 out at
        // 2.5 / 10
        assertThat(first.costUsd()).contains(new java.math.BigDecimal("0.0017458"));
        assertThat(r.cases().get(1).usage().orElseThrow().costUsd())
                .as("an unpriced model: unknown, never 0")
                .isEmpty();
        assertThat(r.cases().get(2).usage().orElseThrow().tokens())
                .as("an errored case's failed attempts count")
                .isEqualTo(200);
        assertThat(r.cases().get(0).evaluatorResults().get(0).reason()).contains("matched `1400`");
    }

    @Test
    void aRerunsReceiptIsVersion6AndCountsTheUsageOfWhatItReplaced() {
        Receipt v4 = FormatSamples.usageReceipt();
        Receipt.CaseResult replaced = v4.cases().get(2);
        Receipt.Usage paid = replaced.usage().orElseThrow();
        Map<String, Receipt.Usage> superseded = new java.util.LinkedHashMap<>();
        superseded.put(Receipt.ALL_CASES, paid);
        replaced.gates().keySet().forEach(g -> superseded.put(g, paid));
        Receipt rerun = new Receipt(
                v4.runId(),
                v4.chunkIndex(),
                v4.chunkId(),
                v4.shard(),
                v4.leaseGeneration() + 1,
                v4.worker(),
                v4.membership(),
                v4.startedAt(),
                v4.finishedAt(),
                v4.evaluators(),
                v4.gates(),
                v4.cases(),
                Optional.of(new Receipt.Rerun(
                        2,
                        Optional.of(FormatSamples.ref("runs/r/receipts/0000000007-g2.json", 99)),
                        List.of(new Receipt.Executed(replaced.ordinal(), List.of())),
                        superseded)));
        byte[] written = ReceiptParser.toJson(rerun);
        String text = new String(written, StandardCharsets.UTF_8);
        assertThat(text).startsWith("{\"format\":\"vigilo.exec.receipt\",\"version\":6,");
        assertThat(text).contains("\"rerun\":{\"generation\":2,\"previous\":{");
        Receipt read = ReceiptParser.fromJson(written, "rerun");
        assertThat(read).isEqualTo(rerun);
        assertThat(ReceiptParser.toJson(read)).isEqualTo(written);
        assertThat(read.usageByScope().get(Receipt.ALL_CASES))
                .isEqualTo(v4.usageByScope().get(Receipt.ALL_CASES).plus(paid));
        assertThat(ReceiptParser.toJson(v4))
                .as("a first execution's receipt stays version 4")
                .isEqualTo(ReceiptParser.toJson(FormatSamples.usageReceipt()));

        String stray = text.replace("\"executed\":[{\"ordinal\":" + replaced.ordinal(), "\"executed\":[{\"ordinal\":1");
        assertThatThrownBy(() -> ReceiptParser.fromJson(stray.getBytes(StandardCharsets.UTF_8), "stray"))
                .isInstanceOf(dev.vigilo.common.errors.DamagedException.class)
                .hasMessageContaining("executed case 1 is not a case of the receipt");
    }

    /**
     * Versions 5 (kept files) and 6 (a rerun) pinned byte for byte: written by the tree-building writer before
     * receipts were streamed (2026-12-03), so the streaming writer is held to the same bytes.
     */
    @Test
    void versions5And6AreWrittenByteForByteAsTheWriterBeforeStreamingWroteThem() throws IOException {
        byte[] v5 = resource("receipt-v5.json");
        Receipt kept = ReceiptParser.fromJson(v5, "receipt-v5.json");
        assertThat(kept.cases().get(0).keptFiles()).hasSize(1);
        assertThat(ReceiptParser.toJson(kept)).isEqualTo(v5);

        byte[] v6 = resource("receipt-v6.json");
        Receipt rerun = ReceiptParser.fromJson(v6, "receipt-v6.json");
        assertThat(rerun.rerun()).isPresent();
        assertThat(ReceiptParser.toJson(rerun)).isEqualTo(v6);

        com.fasterxml.jackson.databind.JsonNode entries =
                new com.fasterxml.jackson.databind.ObjectMapper().readTree(v6).get("cases");
        for (int i = 0; i < rerun.cases().size(); i++) {
            assertThat(ReceiptParser.caseBytes(rerun.cases().get(i)))
                    .as("a case entry's bytes are the document's entry")
                    .isEqualTo(ReceiptParser.caseBytes(entries.get(i)));
        }
    }

    /**
     * Version 8 (transcript slices) and partial receipt version 2 pinned byte for byte: written once by the writer
     * of 2026-12-03 ({@link FormatSamples#sliceReceipt()}, {@link FormatSamples#slicePartialReceipt()}) and kept, so
     * a later writer is held to the same bytes and a later reader to the same values.
     */
    @Test
    void version8AndPartialVersion2AreReadAndWrittenByteForByte() throws IOException {
        byte[] v8 = resource("receipt-v8.json");
        String text = new String(v8, StandardCharsets.UTF_8);
        assertThat(text)
                .startsWith("{\"format\":\"vigilo.exec.receipt\",\"version\":8,")
                .contains("\"rerun\":null,\"resumed_from\":null");
        Receipt r = ReceiptParser.fromJson(v8, "receipt-v8.json");
        assertThat(r).isEqualTo(FormatSamples.sliceReceipt());
        assertThat(ReceiptParser.toJson(r)).isEqualTo(v8);
        assertThat(r.rerun()).isEmpty();
        assertThat(r.resumed()).isEmpty();
        String container = "runs/" + FormatSamples.RUN + "/transcripts/0000000007/g2-c1.jsonl.zstd";
        List<Receipt.TranscriptRef> slices = r.cases().get(0).transcripts();
        assertThat(slices).hasSize(2);
        assertThat(slices.get(0).attempt()).isEqualTo(1);
        assertThat(slices.get(0).ref().key().value()).isEqualTo(container);
        assertThat(slices.get(0).offset()).hasValue(0);
        assertThat(slices.get(0).ref().length()).isEqualTo(1234);
        assertThat(slices.get(0).ref().sha256()).isEqualTo(FormatSamples.sha(container + "@0"));
        assertThat(slices.get(1).attempt()).isEqualTo(2);
        assertThat(slices.get(1).offset()).hasValue(1234);
        assertThat(slices.get(1).ref().length()).isEqualTo(987);
        assertThat(text)
                .contains("{\"attempt\":2,\"key\":\"" + container + "\",\"length\":987,\"sha256\":\""
                        + FormatSamples.sha(container + "@1234").toHex() + "\",\"offset\":1234}");
        // A whole object beside the slices (an older build's entry a resumed chunk carried): no offset.
        Receipt.TranscriptRef whole = r.cases().get(1).transcripts().get(0);
        assertThat(whole.offset()).isEmpty();
        assertThat(whole.ref().key().value()).endsWith("/0000000007/701-a1-g2.jsonl.zstd");
        assertThat(r.cases().get(2).transcripts()).isEmpty();
        assertThat(r.cases().get(0).usage().orElseThrow().costUsd()).contains(new java.math.BigDecimal("0.0017458"));

        byte[] p2 = resource("partial-receipt-v2.json");
        assertThat(new String(p2, StandardCharsets.UTF_8))
                .startsWith("{\"format\":\"vigilo.exec.partial-receipt\",\"version\":2,");
        PartialReceipt partial =
                PartialReceiptParser.fromJson(p2, "partial-receipt-v2.json").receipt();
        assertThat(partial).isEqualTo(FormatSamples.slicePartialReceipt());
        assertThat(PartialReceiptParser.toJson(partial)).isEqualTo(p2);
        assertThat(partial.sequence()).isEqualTo(2);
        assertThat(partial.leaseGeneration()).isEqualTo(1);
        assertThat(partial.previous().orElseThrow().key().value()).endsWith("/receipts/partial/0000000007-g1-p1.json");
        Receipt.TranscriptRef s = partial.cases().get(0).transcripts().get(0);
        assertThat(s.ref().key().value()).endsWith("/0000000007/g1-c2.jsonl.zstd");
        assertThat(s.offset()).hasValue(4096);
        assertThat(s.ref().length()).isEqualTo(55);
        assertThat(partial.cases().stream().map(Receipt.CaseResult::ordinal)).containsExactly(701L, 702L);
    }

    @Test
    void aVersion4ReceiptOfEpochsSumsItsEpochsUsage() throws IOException {
        byte[] written = resource("receipt-v4-epochs.json");
        Receipt r = ReceiptParser.fromJson(written, "receipt-v4-epochs.json");
        assertThat(r).isEqualTo(FormatSamples.usageEpochReceipt());
        assertThat(ReceiptParser.toJson(r)).isEqualTo(written);
        Receipt.CaseResult c = r.cases().get(0);
        assertThat(c.usage().orElseThrow().tokens()).isEqualTo(50 + 51 + 52 + 3 * 4);
        assertThat(c.usage().orElseThrow().costUsd())
                .isEqualTo(c.epochs().stream()
                        .map(e -> e.usage().orElseThrow().costUsd().orElseThrow())
                        .reduce(java.math.BigDecimal::add)
                        .map(dev.vigilo.llm.Pricing::plain));
    }

    @Test
    void aVersion4ReceiptWhoseCostIsNotTheSumOfItsModelsIsDamage() throws IOException {
        String text = new String(resource("receipt-v4.json"), StandardCharsets.UTF_8);
        String altered = text.replaceFirst("\"cost_usd\":\"0.0017458\"", "\"cost_usd\":\"0.0027458\"");
        assertThat(altered).isNotEqualTo(text);
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> ReceiptParser.fromJson(altered.getBytes(StandardCharsets.UTF_8), "k"))
                .isInstanceOf(dev.vigilo.common.errors.DamagedException.class)
                .hasMessageContaining("is not the sum of its models' costs");
    }

    @Test
    void aVersion1ReceiptReadsWithoutTranscripts() throws IOException {
        Receipt r = ReceiptParser.fromJson(resource("receipt-v1.json"), "receipt-v1.json");
        Receipt expected = FormatSamples.receipt();
        assertThat(r.cases()).allSatisfy(c -> assertThat(c.transcripts()).isEmpty());
        assertThat(r.cases())
                .isEqualTo(expected.cases().stream()
                        .map(c -> c.withTranscripts(List.of()))
                        .toList());
        assertThat(r.runId()).isEqualTo(expected.runId());
        assertThat(r.finishedAt()).isEqualTo(expected.finishedAt());
    }

    @Test
    void aRunSnapshotReadsAndIsWrittenByteForByte() throws IOException {
        byte[] written = resource("snapshot-v1.json");
        RunSnapshot s = RunSnapshotParser.fromJson(new String(written, StandardCharsets.UTF_8));
        assertThat(s).isEqualTo(FormatSamples.snapshot());
        assertThat(RunSnapshotParser.toJson(s)).isEqualTo(written);
        assertThat(s.sha256()).isEqualTo(dev.vigilo.storage.Sha256.of(written));
    }

    @Test
    void aVersion3ReceiptOfEpochsReads() throws IOException {
        byte[] written = resource("receipt-v3.json");
        Receipt r = ReceiptParser.fromJson(written, "receipt-v3.json");
        assertThat(r).isEqualTo(FormatSamples.epochReceipt());
        assertThat(r.epochCount()).isEqualTo(3);
        assertThat(r.cases().get(0).epochPasses()).containsEntry("all", 2);
        assertThat(r.cases().get(1).errored()).isTrue();
        assertThat(r.cases().get(1).error().orElseThrow().message()).startsWith("epoch 3 of 3: ");
        // gate "all", n = 3: one case with two passing epochs; the errored case is not counted
        assertThat(r.epochPassHistograms()).containsExactly(0, 0, 1, 0);
    }

    @Test
    void aVersion3SnapshotOfEpochsReadsAndIsWrittenByteForByte() throws IOException {
        byte[] written = resource("snapshot-v3.json");
        RunSnapshot s = RunSnapshotParser.fromJson(new String(written, StandardCharsets.UTF_8));
        assertThat(s).isEqualTo(FormatSamples.epochSnapshot());
        assertThat(s.epochs()).isEqualTo(3);
        assertThat(RunSnapshotParser.toJson(s)).isEqualTo(written);
    }

    @Test
    void aVersion3ReceiptWhoseEpochPassesDisagreeWithItsEpochsIsDamage() throws IOException {
        String text = new String(resource("receipt-v3.json"), StandardCharsets.UTF_8)
                .replaceFirst("\"epoch_passes\":\\{\"all\":2}", "\"epoch_passes\":{\"all\":3}");
        assertThat(text).contains("\"epoch_passes\":{\"all\":3}");
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> ReceiptParser.fromJson(text.getBytes(StandardCharsets.UTF_8), "forged"))
                .hasMessageContaining("epoch_passes {all=3} does not match its epochs' {all=2}");
    }
}
