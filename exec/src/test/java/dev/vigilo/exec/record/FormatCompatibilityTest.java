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
 * {@link RunSnapshotParser} existed (the version 1 receipt is the version 2 one without its transcript lists).
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
}
