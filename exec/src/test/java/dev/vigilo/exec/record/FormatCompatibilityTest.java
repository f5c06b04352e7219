package dev.vigilo.exec.record;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The parsers read what the writers before them wrote, and write the same bytes: the resources beside this class were
 * written by {@code Receipt.encode} and {@code RunSnapshot.encode} before {@link ReceiptParser} and
 * {@link RunSnapshotParser} existed (the version 1 receipt is the version 2 one without its transcript lists). The
 * version 3 files (epochs) pin the bytes this build writes, so a later build keeps reading and writing them.
 */
class FormatCompatibilityTest {
    static byte[] resource(String name) throws IOException {
        try (InputStream in = FormatCompatibilityTest.class.getResourceAsStream(name)) {
            assertThat(in).as(name).isNotNull();
            return in.readAllBytes();
        }
    }

    @Test
    void aVersion2ReceiptReadsAndIsWrittenByteForByte() throws IOException {
        byte[] written = resource("receipt-v2.json");
        assertThat(ReceiptParser.fromJson(written, "receipt-v2.json")).isEqualTo(FormatSamples.receipt());
        assertThat(ReceiptParser.toJson(FormatSamples.receipt())).isEqualTo(written);
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
    void aVersion3ReceiptOfEpochsReadsAndIsWrittenByteForByte() throws IOException {
        byte[] written = resource("receipt-v3.json");
        Receipt r = ReceiptParser.fromJson(written, "receipt-v3.json");
        assertThat(r).isEqualTo(FormatSamples.epochReceipt());
        assertThat(ReceiptParser.toJson(r)).isEqualTo(written);
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
