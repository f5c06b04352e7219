package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spec's Measurement table, for both channels, judged by Vigilo's protocol reader and (where the spec
 * states it) by the unpatched referee: partial tail; two-writer; recycled tail disciplined and violating; plus
 * a torn commit frame and a manifest that lags or runs ahead of the file.
 */
class MeasurementTableTest {
    @TempDir
    Path dir;

    // ------------------------------------------------------------------ P1 (commit records)

    @Test
    void p1PartialTailWithoutCommitFramesIsTodaysBehaviour() throws Exception {
        ProtocolLogs l = new ProtocolLogs()
                .plain(0, 2, null)
                .plain(3, 4, null)
                .plain(5, 7, null)
                .tornLast(3);
        Path f = l.write(dir, "partial", null);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.channel()).isEqualTo(Channel.NONE);
        assertThat(v.accepted()).isTrue();
        var ref = Referee.get().judge(f);
        assertThat(v.events()).isEqualTo(ref.path("events").asLong());
        assertThat(v.tornOffset()).isEqualTo(l.endOfFrame(2));
    }

    @Test
    void p1TwoWriterInterleaveFencesTheStaleEpoch() throws Exception {
        Path f = new ProtocolLogs().p1(0, 9, 1).p1(4, 8, 0).write(dir, "two-writer", null);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.events()).isEqualTo(10);
        assertThat(v.fenced()).isEqualTo(5);
        assertThat(v.channel()).isEqualTo(Channel.P1);
        assertThat(v.hwSeq()).isEqualTo(9);
        assertThat(Referee.get().judge(f).path("verdict").asText()).isEqualTo("REJECT");
    }

    @Test
    void p1RecycledTailDisciplinedSwitchesEpochAndTruncatesStaleClosers() throws Exception {
        Path f = new ProtocolLogs().p1(0, 9, 0).p1(10, 12, 0).p1(10, 19, 1).write(dir, "recycled", null);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.events()).isEqualTo(20);
        assertThat(v.truncated()).isEqualTo(3);
        assertThat(v.maxEpoch()).isEqualTo(1);
        assertThat(Referee.get().judge(f).path("verdict").asText()).isEqualTo("REJECT");
    }

    @Test
    void p1RecycledTailViolatingSameEpochFailsClosed() throws Exception {
        Path f = new ProtocolLogs().p1(0, 9, 0).p1(10, 12, 0).p1(10, 19, 0).write(dir, "violating", null);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.verdict()).isEqualTo("REJECT");
        assertThat(v.error()).contains("expected 13, got 10");
        assertThat(v.errorOffset()).isNotNull();
        assertThat(Referee.get().judge(f).path("verdict").asText()).isEqualTo("REJECT");
    }

    @Test
    void p1TornCommitFrameStepsBackToThePreviousCommit() throws Exception {
        ProtocolLogs l =
                new ProtocolLogs().p1(0, 4, 0).p1(5, 9, 0).p1(10, 14, 0).tornLast(2);
        Path f = l.write(dir, "torn-commit", null);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.stored()).isEqualTo(10);
        assertThat(v.hwSeq()).isEqualTo(9);
        assertThat(v.hwOffset()).isEqualTo(l.endOfFrame(2));
        assertThat(v.tornOffset()).isEqualTo(l.endOfFrame(2));
        // the referee recovers the torn frame's complete lines; the protocol treats them as uncommitted
        assertThat(Referee.get().judge(f).path("events").asLong()).isGreaterThan(10);
    }

    @Test
    void p1CleanLogIsAcceptedByTheRefereeWithTheSameEvents() throws Exception {
        Path f = new ProtocolLogs().p1(0, 4, 0).p1(5, 9, 0).p1(10, 14, 1).write(dir, "clean-p1", null);
        VerifyReport v = SessionVerifier.verify(f);
        var ref = Referee.get().judge(f);
        assertThat(ref.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(v.channel()).isEqualTo(Channel.P1);
        assertThat(v.events()).isEqualTo(ref.path("events").asLong()).isEqualTo(15);
    }

    @Test
    void p1DamageBeforeTheHighWatermarkRejects() throws Exception {
        ProtocolLogs l = new ProtocolLogs().p1(0, 4, 0).p1(5, 9, 0).p1(10, 14, 0);
        byte[] mid = l.frames.get(2).clone();
        mid[mid.length - 1] ^= 1;
        l.frames.set(2, mid);
        VerifyReport v = SessionVerifier.verify(l.write(dir, "damaged", null));
        assertThat(v.verdict()).isEqualTo("REJECT");
        assertThat(v.errorOffset()).isEqualTo(l.endOfFrame(1));
    }

    @Test
    void p1DamageAfterTheHighWatermarkIsAnUncommittedTail() throws Exception {
        ProtocolLogs l = new ProtocolLogs().p1(0, 4, 0).p1(5, 9, 0).plain(10, 14, null);
        byte[] last = l.frames.get(3).clone();
        last[last.length - 1] ^= 1;
        l.frames.set(3, last);
        VerifyReport v = SessionVerifier.verify(l.write(dir, "damaged-tail", null));
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.stored()).isEqualTo(10);
    }

    // ------------------------------------------------------------------ P2 (sidecar manifest)

    @Test
    void p2PartialTailAcceptsTheCommittedPrefix() throws Exception {
        ProtocolLogs l = new ProtocolLogs().plain(0, 2, 0L).plain(3, 4, 0L).plain(5, 7, 0L);
        Manifest m = l.manifest(3, 0, 4);
        l.tornLast(3);
        VerifyReport v = SessionVerifier.verify(l.write(dir, "p2-partial", m));
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.channel()).isEqualTo(Channel.P2);
        assertThat(v.manifestState()).isEqualTo("lags");
        assertThat(v.events()).isEqualTo(5);
    }

    @Test
    void p2TwoWriterStaleBatchPastTheManifestIsUncommitted() throws Exception {
        ProtocolLogs l = new ProtocolLogs().plain(0, 9, 1L);
        Manifest m = l.manifest(2, 1, 9);
        l.plain(4, 8, null); // stale writer (epoch 0) appended, its manifest update was refused
        Path f = l.write(dir, "p2-two-writer", m);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.events()).isEqualTo(10);
        assertThat(v.truncated()).isEqualTo(5);
        assertThat(Referee.get().judge(f).path("verdict").asText()).isEqualTo("REJECT");
    }

    @Test
    void p2RecycledTailDisciplinedUsesTheEpochHistory() throws Exception {
        ProtocolLogs l = new ProtocolLogs().plain(0, 9, 0L).plain(10, 12, 0L).plain(10, 19, 1L);
        VerifyReport v = SessionVerifier.verify(l.write(dir, "p2-recycled", l.manifest(4, 1, 19)));
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.channel()).isEqualTo(Channel.P2);
        assertThat(v.events()).isEqualTo(20);
        assertThat(v.truncated()).isEqualTo(3);
    }

    @Test
    void p2RecycledTailViolatingFailsClosed() throws Exception {
        ProtocolLogs l = new ProtocolLogs().plain(0, 9, 0L).plain(10, 12, 0L).plain(10, 19, 0L);
        VerifyReport v = SessionVerifier.verify(l.write(dir, "p2-violating", l.manifest(4, 0, 19)));
        assertThat(v.verdict()).isEqualTo("REJECT");
        assertThat(v.error()).contains("expected 13, got 10");
    }

    @Test
    void p2ManifestThatLagsIsTheConservativeClaim() throws Exception {
        ProtocolLogs l = new ProtocolLogs().plain(0, 4, 0L).plain(5, 9, 0L).plain(10, 14, 0L);
        VerifyReport v = SessionVerifier.verify(l.write(dir, "p2-lags", l.manifest(3, 0, 9)));
        assertThat(v.manifestState()).isEqualTo("lags");
        assertThat(v.stored()).isEqualTo(10);
        assertThat(v.truncated()).isEqualTo(5);
        assertThat(v.hwOffset()).isEqualTo(l.endOfFrame(2));
    }

    @Test
    void p2ManifestThatRunsAheadIsNeverStricterThanTheFrameScan() throws Exception {
        ProtocolLogs l = new ProtocolLogs().plain(0, 4, 0L).plain(5, 9, 0L).plain(10, 14, 0L);
        Manifest m = l.manifest(4, 0, 14);
        l.frames.remove(3); // the file lost its last frame (e.g. restored from an older copy)
        Path f = l.write(dir, "p2-ahead", m);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.manifestState()).isEqualTo("ahead");
        assertThat(v.verdict()).isEqualTo("ACCEPT");
        assertThat(v.stored()).isEqualTo(10);
        assertThat(v.events()).isEqualTo(Referee.get().judge(f).path("events").asLong());
    }

    @Test
    void bothChannelsTakeTheMoreConservativeClaim() throws Exception {
        ProtocolLogs l = new ProtocolLogs().p1(0, 4, 0).p1(5, 9, 0).p1(10, 14, 0);
        l.history.add(new Manifest.EpochStart(new Epoch(0), l.endOfFrame(0), 0));
        VerifyReport v = SessionVerifier.verify(l.write(dir, "both", l.manifest(3, 0, 9)));
        assertThat(v.channel()).isEqualTo(Channel.P2);
        assertThat(v.stored()).isEqualTo(10);
    }
}
