package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** repair, cat and compact on real files, judged by Vigilo and the referee. */
class OperationsTest {
    @TempDir
    Path dir;

    private Path corpus(String name) throws Exception {
        Path f = dir.resolve(name + ".jsonl.zstd");
        Files.write(f, Corpus.shapes().get(name));
        return f;
    }

    @Test
    void repairOfATornOpenTurnWritesTheRecoveredEventsAndTheClosers() throws Exception {
        Path in = corpus("open-turn-torn");
        JsonNode refIn = Referee.get().judge(in);
        Path out = dir.resolve("repaired.jsonl.zstd");
        RepairReport r = SessionRepair.repair(in, out, false);
        assertThat(r.closers()).isEqualTo(refIn.path("closers").asLong()).isPositive();
        JsonNode refOut = Referee.get().judge(out);
        assertThat(refOut.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(refOut.path("closers").asLong()).isZero();
        assertThat(refOut.path("events").asLong())
                .isEqualTo(refIn.path("events").asLong());
        assertThat(WriterTest.toList(refOut.path("types"))).isEqualTo(WriterTest.toList(refIn.path("types")));
        assertThat(Files.readAllBytes(in)).isEqualTo(Corpus.shapes().get("open-turn-torn")); // original untouched
        VerifyReport v = SessionVerifier.verify(out);
        assertThat(v.closers()).isZero();
        assertThat(v.tornOffset()).isNull();
    }

    @Test
    void repairOfAProtocolLogResolvesFencingIntoALogTheRefereeAccepts() throws Exception {
        Path in = new ProtocolLogs()
                .p1(0, 9, 0)
                .p1(10, 12, 0)
                .p1(10, 19, 1)
                .p1(4, 8, 0)
                .write(dir, "recycled-and-stale", null);
        assertThat(Referee.get().judge(in).path("verdict").asText()).isEqualTo("REJECT");
        Path out = dir.resolve("resolved.jsonl.zstd");
        SessionRepair.repair(in, out, false);
        VerifyReport v = SessionVerifier.verify(out);
        assertThat(v.accepted()).isTrue();
        assertThat(v.stored()).isEqualTo(20);
        JsonNode ref = Referee.get().judge(out);
        assertThat(ref.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(ref.path("events").asLong()).isEqualTo(20);
    }

    @Test
    void repairInPlaceKeepsABackupAndRepairOfARejectedLogWritesNothing() throws Exception {
        Path in = corpus("open-turn-closers");
        byte[] original = Files.readAllBytes(in);
        RepairReport r = SessionRepair.repair(in, null, true);
        assertThat(r.backup()).exists();
        assertThat(Files.readAllBytes(r.backup())).isEqualTo(original);
        assertThat(SessionVerifier.verify(in).closers()).isZero();
        Path bad = corpus("checksum-mismatch-middle");
        Path out = dir.resolve("never.jsonl.zstd");
        assertThatThrownBy(() -> SessionRepair.repair(bad, out, false))
                .isInstanceOf(CorruptSessionLogException.class)
                .hasMessageContaining("failed validation");
        assertThat(out).doesNotExist();
    }

    @Test
    void catStreamsCommittedEventsWithPackedRowsExpanded() throws Exception {
        Path in = corpus("clean-packed-rows");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        SessionCat.CatReport r = SessionCat.cat(in, 0, out);
        List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        assertThat(lines).hasSize((int) r.report().stored()).hasSize((int) r.written());
        for (int i = 0; i < lines.size(); i++) {
            assertThat(Json.MAPPER.readTree(lines.get(i)).get("seq").asLong()).isEqualTo(i);
        }
        ByteArrayOutputStream tail = new ByteArrayOutputStream();
        assertThat(SessionCat.cat(in, 70, tail).written()).isEqualTo(r.report().stored() - 70);
        assertThat(tail.toString(StandardCharsets.UTF_8).lines().findFirst().orElseThrow())
                .contains("\"seq\":70");
    }

    @Test
    void catOmitsCommitRecordsAndFencedBatches() throws Exception {
        Path in = new ProtocolLogs().p1(0, 9, 1).p1(4, 8, 0).write(dir, "cat-p1", null);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        SessionCat.CatReport r = SessionCat.cat(in, 0, out);
        assertThat(r.written()).isEqualTo(9);
        assertThat(out.toString(StandardCharsets.UTF_8)).doesNotContain("vigilo/commit");
        ByteArrayOutputStream none = new ByteArrayOutputStream();
        assertThat(SessionCat.cat(corpus("seq-gap-middle"), 0, none).report().accepted())
                .isFalse();
        assertThat(none.size()).isZero();
    }

    @Test
    void compactMergesFramesAndTheRefereeStillAccepts() throws Exception {
        Path in = dir.resolve("many.jsonl.zstd");
        var events = WriterTest.parse(LogBuilder.turns(31, 30, false));
        try (SessionLogWriter w =
                SessionLogWriter.create(in, WriterTest.HEADER, new LockFileEpochSource(), WriterOptions.defaults())) {
            for (int i = 0; i < events.size(); i += 3) {
                w.append(events.subList(i, Math.min(events.size(), i + 3)));
            }
        }
        JsonNode refIn = Referee.get().judge(in);
        Path out = dir.resolve("compacted.jsonl.zstd");
        CompactReport c = SessionCompactor.compact(in, out, SessionCompactor.DEFAULT_FRAME_BYTES);
        assertThat(c.framesAfter()).isLessThan(c.framesBefore() / 10);
        assertThat(c.bytesAfter()).isLessThan(c.bytesBefore());
        JsonNode refOut = Referee.get().judge(out);
        assertThat(refOut.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(refOut.path("events").asLong())
                .isEqualTo(refIn.path("events").asLong());
        VerifyReport v = SessionVerifier.verify(out);
        assertThat(v.channel()).isEqualTo(Channel.P2);
        assertThat(v.manifestState()).isEqualTo("consistent");
        // in place: same result, backup kept, and a writer can continue the compacted log
        CompactReport inPlace = SessionCompactor.compact(in, null, SessionCompactor.DEFAULT_FRAME_BYTES);
        assertThat(inPlace.backup()).exists();
        try (SessionLogWriter w = SessionLogWriter.open(in, new LockFileEpochSource(), WriterOptions.defaults())) {
            w.append(List.of(WriterTest.todo(1)));
        }
        assertThat(SessionVerifier.verify(in).accepted()).isTrue();
    }
}
