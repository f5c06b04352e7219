package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The spec's Measurement table, for both protocol channels and both encodings ({@code session.jsonl.zstd} and
 * the uncompressed {@code session.jsonl}), judged by Vigilo's protocol reader and (where the spec states it) by
 * the unpatched referee: partial tail; two-writer; recycled tail disciplined and violating; plus a torn commit
 * unit and a manifest that lags or runs ahead of the file. The protocol's verdicts are the same in both
 * encodings; the published reader's differ where its uncompressed path differs (a seq gap without a later
 * turn/end truncates the uncompressed log instead of rejecting it).
 */
class MeasurementTableTest {
    @TempDir
    Path dir;

    private static boolean zstd(Compression c) {
        return c == Compression.ZSTD;
    }

    /** Damages unit {@code i}: a zstd frame's checksum trailer, or the first byte of an uncompressed batch's first line. */
    private static void damage(ProtocolLogs l, int i) {
        byte[] b = l.frames.get(i).clone();
        if (zstd(l.compression)) {
            b[b.length - 1] ^= 1;
        } else {
            b[0] = 'z';
        }
        l.frames.set(i, b);
    }

    // ------------------------------------------------------------------ P1 (commit records)

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p1PartialTailWithoutCommitFramesIsTodaysBehaviour(Compression c) throws Exception {
        ProtocolLogs l = new ProtocolLogs(c)
                .plain(0, 2, null)
                .plain(3, 4, null)
                .plain(5, 7, null)
                .tornLast(3);
        Path f = l.write(dir, "partial", null);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.channel()).isEqualTo(Channel.NONE);
        assertThat(v.compression()).isEqualTo(c);
        assertThat(v.accepted()).isTrue();
        JsonNode ref = Referee.get().judge(f);
        assertThat(v.events()).isEqualTo(ref.path("events").asLong());
        assertThat(v.tornOffset()).isEqualTo(ref.path("torn").path("truncateTo").asLong());
        if (zstd(c)) {
            assertThat(v.tornOffset()).isEqualTo(l.endOfFrame(2));
        } else {
            assertThat(v.stored()).isEqualTo(7); // the torn last line only
        }
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p1TwoWriterInterleaveFencesTheStaleEpoch(Compression c) throws Exception {
        Path f = new ProtocolLogs(c).p1(0, 9, 1).p1(4, 8, 0).write(dir, "two-writer", null);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.events()).isEqualTo(10);
        assertThat(v.fenced()).isEqualTo(5);
        assertThat(v.channel()).isEqualTo(Channel.P1);
        assertThat(v.hwSeq()).isEqualTo(9);
        JsonNode ref = Referee.get().judge(f);
        if (zstd(c)) {
            assertThat(ref.path("verdict").asText()).isEqualTo("REJECT");
        } else { // the published uncompressed path truncates at the seq gap (no turn/end follows it)
            assertThat(ref.path("events").asLong()).isEqualTo(10);
        }
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p1RecycledTailDisciplinedSwitchesEpochAndTruncatesStaleClosers(Compression c) throws Exception {
        Path f = new ProtocolLogs(c).p1(0, 9, 0).p1(10, 12, 0).p1(10, 19, 1).write(dir, "recycled", null);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.events()).isEqualTo(20);
        assertThat(v.truncated()).isEqualTo(3);
        assertThat(v.maxEpoch()).isEqualTo(1);
        JsonNode ref = Referee.get().judge(f);
        if (zstd(c)) {
            assertThat(ref.path("verdict").asText()).isEqualTo("REJECT");
        } else {
            assertThat(ref.path("events").asLong()).isEqualTo(13); // the stale closers kept, the resumer cut
        }
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p1RecycledTailViolatingSameEpochFailsClosed(Compression c) throws Exception {
        Path f = new ProtocolLogs(c).p1(0, 9, 0).p1(10, 12, 0).p1(10, 19, 0).write(dir, "violating", null);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.verdict()).isEqualTo("REJECT");
        assertThat(v.error()).contains("expected 13, got 10");
        assertThat(v.errorOffset()).isNotNull();
        JsonNode ref = Referee.get().judge(f);
        if (zstd(c)) {
            assertThat(ref.path("verdict").asText()).isEqualTo("REJECT");
        } else {
            assertThat(ref.path("events").asLong()).isEqualTo(13);
        }
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p1TornCommitFrameStepsBackToThePreviousCommit(Compression c) throws Exception {
        ProtocolLogs l =
                new ProtocolLogs(c).p1(0, 4, 0).p1(5, 9, 0).p1(10, 14, 0).tornLast(2);
        Path f = l.write(dir, "torn-commit", null);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.stored()).isEqualTo(10);
        assertThat(v.hwSeq()).isEqualTo(9);
        assertThat(v.hwOffset()).isEqualTo(l.endOfFrame(2));
        JsonNode ref = Referee.get().judge(f);
        assertThat(v.tornOffset()).isEqualTo(ref.path("torn").path("truncateTo").asLong());
        if (zstd(c)) {
            assertThat(v.tornOffset()).isEqualTo(l.endOfFrame(2));
        }
        // the referee recovers the torn batch's complete lines; the protocol treats them as uncommitted
        assertThat(ref.path("events").asLong()).isGreaterThan(10);
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p1CleanLogIsAcceptedByTheRefereeWithTheSameEvents(Compression c) throws Exception {
        Path f = new ProtocolLogs(c).p1(0, 4, 0).p1(5, 9, 0).p1(10, 14, 1).write(dir, "clean-p1", null);
        VerifyReport v = SessionVerifier.verify(f);
        JsonNode ref = Referee.get().judge(f);
        assertThat(ref.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(v.channel()).isEqualTo(Channel.P1);
        assertThat(v.events()).isEqualTo(ref.path("events").asLong()).isEqualTo(15);
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p1DamageBeforeTheHighWatermarkRejects(Compression c) throws Exception {
        ProtocolLogs l = new ProtocolLogs(c).p1(0, 4, 0).p1(5, 9, 0).p1(10, 14, 0);
        damage(l, 2);
        VerifyReport v = SessionVerifier.verify(l.write(dir, "damaged", null));
        assertThat(v.verdict()).isEqualTo("REJECT");
        assertThat(v.errorOffset()).isEqualTo(l.endOfFrame(1));
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p1DamageAfterTheHighWatermarkIsAnUncommittedTail(Compression c) throws Exception {
        ProtocolLogs l = new ProtocolLogs(c).p1(0, 4, 0).p1(5, 9, 0).plain(10, 14, null);
        damage(l, 3);
        VerifyReport v = SessionVerifier.verify(l.write(dir, "damaged-tail", null));
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.stored()).isEqualTo(10);
    }

    // ------------------------------------------------------------------ P2 (sidecar manifest)

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p2PartialTailAcceptsTheCommittedPrefix(Compression c) throws Exception {
        ProtocolLogs l = new ProtocolLogs(c).plain(0, 2, 0L).plain(3, 4, 0L).plain(5, 7, 0L);
        Manifest m = l.manifest(3, 0, 4);
        l.tornLast(3);
        VerifyReport v = SessionVerifier.verify(l.write(dir, "p2-partial", m));
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.channel()).isEqualTo(Channel.P2);
        assertThat(v.manifestState()).isEqualTo("lags");
        assertThat(v.events()).isEqualTo(5);
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p2TwoWriterStaleBatchPastTheManifestIsUncommitted(Compression c) throws Exception {
        ProtocolLogs l = new ProtocolLogs(c).plain(0, 9, 1L);
        Manifest m = l.manifest(2, 1, 9);
        l.plain(4, 8, null); // stale writer (epoch 0) appended, its manifest update was refused
        Path f = l.write(dir, "p2-two-writer", m);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.events()).isEqualTo(10);
        assertThat(v.truncated()).isEqualTo(5);
        JsonNode ref = Referee.get().judge(f);
        if (zstd(c)) {
            assertThat(ref.path("verdict").asText()).isEqualTo("REJECT");
        } else {
            assertThat(ref.path("events").asLong()).isEqualTo(10);
        }
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p2RecycledTailDisciplinedUsesTheEpochHistory(Compression c) throws Exception {
        ProtocolLogs l = new ProtocolLogs(c).plain(0, 9, 0L).plain(10, 12, 0L).plain(10, 19, 1L);
        VerifyReport v = SessionVerifier.verify(l.write(dir, "p2-recycled", l.manifest(4, 1, 19)));
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.channel()).isEqualTo(Channel.P2);
        assertThat(v.events()).isEqualTo(20);
        assertThat(v.truncated()).isEqualTo(3);
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p2RecycledTailViolatingFailsClosed(Compression c) throws Exception {
        ProtocolLogs l = new ProtocolLogs(c).plain(0, 9, 0L).plain(10, 12, 0L).plain(10, 19, 0L);
        VerifyReport v = SessionVerifier.verify(l.write(dir, "p2-violating", l.manifest(4, 0, 19)));
        assertThat(v.verdict()).isEqualTo("REJECT");
        assertThat(v.error()).contains("expected 13, got 10");
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p2ManifestThatLagsIsTheConservativeClaim(Compression c) throws Exception {
        ProtocolLogs l = new ProtocolLogs(c).plain(0, 4, 0L).plain(5, 9, 0L).plain(10, 14, 0L);
        VerifyReport v = SessionVerifier.verify(l.write(dir, "p2-lags", l.manifest(3, 0, 9)));
        assertThat(v.manifestState()).isEqualTo("lags");
        assertThat(v.stored()).isEqualTo(10);
        assertThat(v.truncated()).isEqualTo(5);
        assertThat(v.hwOffset()).isEqualTo(l.endOfFrame(2));
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void p2ManifestThatRunsAheadIsNeverStricterThanTheFrameScan(Compression c) throws Exception {
        ProtocolLogs l = new ProtocolLogs(c).plain(0, 4, 0L).plain(5, 9, 0L).plain(10, 14, 0L);
        Manifest m = l.manifest(4, 0, 14);
        l.frames.remove(3); // the file lost its last batch (e.g. restored from an older copy)
        Path f = l.write(dir, "p2-ahead", m);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.manifestState()).isEqualTo("ahead");
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.stored()).isEqualTo(10);
        assertThat(v.events()).isEqualTo(Referee.get().judge(f).path("events").asLong());
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void aManifestWhoseChecksumDisagreesIsInvalidAndTheFileDecides(Compression c) throws Exception {
        ProtocolLogs l = new ProtocolLogs(c).plain(0, 4, 0L).plain(5, 9, 0L);
        Manifest good = l.manifest(3, 0, 9);
        Manifest bad = new Manifest(
                good.epoch(),
                good.endSeq(),
                good.frames(),
                good.committedBytes(),
                good.lastFrameChecksum() ^ 1,
                good.epochs());
        VerifyReport v = SessionVerifier.verify(l.write(dir, "p2-bad-checksum", bad));
        assertThat(v.manifestState()).isEqualTo("invalid");
        assertThat(v.channel()).isEqualTo(Channel.NONE);
        assertThat(v.stored()).isEqualTo(10);
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void bothChannelsTakeTheMoreConservativeClaim(Compression c) throws Exception {
        ProtocolLogs l = new ProtocolLogs(c).p1(0, 4, 0).p1(5, 9, 0).p1(10, 14, 0);
        l.history.add(new Manifest.EpochStart(new Epoch(0), l.endOfFrame(0), 0));
        VerifyReport v = SessionVerifier.verify(l.write(dir, "both", l.manifest(3, 0, 9)));
        assertThat(v.channel()).isEqualTo(Channel.P2);
        assertThat(v.stored()).isEqualTo(10);
    }
}
