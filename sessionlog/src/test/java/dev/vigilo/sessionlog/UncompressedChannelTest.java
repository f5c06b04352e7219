package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The uncompressed {@code session.jsonl} end to end: the writer (P1, P2, epochs, group commit) writes logs the
 * referee accepts with the same events; reopening truncates an uncommitted tail; cat, repair and compact work on
 * it and can convert between the encodings; a name that disagrees with the bytes is a clear REJECT.
 */
class UncompressedChannelTest {
    @TempDir
    Path dir;

    private static final WriterOptions PLAIN_P1P2 = WriterOptions.defaults().withCompression(Compression.NONE);

    private Path writeTurns(String name, WriterOptions opts) {
        Path f = dir.resolve(name + ".jsonl");
        List<ObjectNode> events = WriterTest.parse(LogBuilder.turns(21, 4, false));
        try (SessionLogWriter w = SessionLogWriter.create(f, WriterTest.HEADER, new LockFileEpochSource(), opts)) {
            for (int i = 0; i < events.size(); i += 7) {
                w.append(events.subList(i, Math.min(events.size(), i + 7)));
            }
        }
        return f;
    }

    @Test
    void thePlainWriterWritesWhatThePublishedWriterWritesUncompressed() throws Exception {
        Path f = writeTurns("plain", WriterOptions.plain().withCompression(Compression.NONE));
        Path z = dir.resolve("plain.jsonl.zstd");
        List<ObjectNode> events = WriterTest.parse(LogBuilder.turns(21, 4, false));
        try (SessionLogWriter w =
                SessionLogWriter.create(z, WriterTest.HEADER, new LockFileEpochSource(), WriterOptions.plain())) {
            for (int i = 0; i < events.size(); i += 7) {
                w.append(events.subList(i, Math.min(events.size(), i + 7)));
            }
        }
        // the same bytes as the zstd log's frames decoded: one encoding is the other's twin
        assertThat(Files.readAllBytes(f)).isEqualTo(PlainCorpus.twin(Files.readAllBytes(z)));
        VerifyReport v = SessionVerifier.verify(f);
        JsonNode ref = Referee.get().judge(f);
        assertThat(ref.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(v.compression()).isEqualTo(Compression.NONE);
        assertThat(v.channel()).isEqualTo(Channel.NONE);
        assertThat(v.events()).isEqualTo(ref.path("events").asLong());
        assertThat(RefereeDifferentialTest.vigiloTypes(f))
                .containsExactlyElementsOf(WriterTest.toList(ref.path("types")));
        assertThat(v.toJson()).contains("\"compression\":\"none\"");
    }

    @Test
    void protocolLogsUncompressedAreAcceptedByTheRefereeAndTheManifestChecksOut() throws Exception {
        Path f = writeTurns("p1p2", PLAIN_P1P2);
        VerifyReport v = SessionVerifier.verify(f);
        JsonNode ref = Referee.get().judge(f);
        assertThat(ref.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(v.channel()).isEqualTo(Channel.P2);
        assertThat(v.manifestState()).isEqualTo("consistent");
        assertThat(v.events()).isEqualTo(ref.path("events").asLong());
        Manifest m = ManifestCodec.read(f);
        long lines = Files.readAllLines(f).size();
        assertThat(m.frames())
                .as("an uncompressed manifest counts lines")
                .isEqualTo(lines)
                .isEqualTo(v.frames());
        assertThat(m.committedBytes()).isEqualTo(Files.size(f));
    }

    @Test
    void epochsFencingAndReopeningWorkUncompressed() throws Exception {
        Path f = dir.resolve("stale.jsonl");
        SessionLogWriter stale =
                SessionLogWriter.create(f, WriterTest.HEADER, EpochSource.fixed(new Epoch(0)), PLAIN_P1P2);
        stale.append(List.of(WriterTest.todo(0), WriterTest.todo(1)));
        try (SessionLogWriter fresh = SessionLogWriter.open(f, EpochSource.fixed(new Epoch(1)), PLAIN_P1P2)) {
            fresh.append(List.of(WriterTest.todo(2)));
            assertThatThrownBy(() -> stale.append(List.of(WriterTest.todo(3))))
                    .isInstanceOf(dev.vigilo.common.errors.FencedException.class);
            fresh.append(List.of(WriterTest.todo(5)));
        }
        stale.close();
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.accepted()).isTrue();
        assertThat(v.stored()).isEqualTo(7); // [0,1,c][2,c][5,c]
        // an uncommitted half-written batch is truncated when a writer reopens the log
        long committed = Files.size(f);
        Files.write(
                f,
                (ProtocolLogs.filler(7) + "\n{\"type\":\"todo").getBytes(StandardCharsets.UTF_8),
                StandardOpenOption.APPEND);
        try (SessionLogWriter w = SessionLogWriter.open(f, new LockFileEpochSource(), PLAIN_P1P2)) {
            assertThat(Files.size(f)).isEqualTo(committed);
            assertThat(w.append(List.of(WriterTest.todo(6))).firstSeq()).isEqualTo(new Seq(7));
        }
        VerifyReport after = SessionVerifier.verify(f);
        assertThat(after.accepted()).isTrue();
        assertThat(after.manifestState()).isEqualTo("consistent");
        // the published reader stops at the stale batch's seq gap and truncates the rest (no turn/end follows)
        JsonNode ref = Referee.get().judge(f);
        assertThat(ref.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(ref.path("stored").asLong()).isEqualTo(5).isLessThan(after.stored());
    }

    @Test
    void catRepairAndCompactWorkUncompressedAndConvert() throws Exception {
        Path in = dir.resolve("open.jsonl");
        Files.write(in, PlainCorpus.shapes().get("open-turn-torn"));
        JsonNode refIn = Referee.get().judge(in);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        SessionCat.CatReport cat = SessionCat.cat(in, 0, out);
        assertThat(cat.report().accepted()).isTrue();
        assertThat(cat.written()).isEqualTo(refIn.path("stored").asLong());
        // repair keeps the encoding: the torn line dropped, closers appended
        Path repaired = dir.resolve("repaired.jsonl");
        RepairReport r = SessionRepair.repair(in, repaired, false);
        assertThat(r.closers()).isEqualTo(refIn.path("closers").asLong()).isPositive();
        JsonNode refOut = Referee.get().judge(repaired);
        assertThat(refOut.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(refOut.path("closers").asLong()).isZero();
        assertThat(refOut.path("torn").isNull()).isTrue();
        assertThat(refOut.path("events").asLong())
                .isEqualTo(refIn.path("events").asLong());
        // compact to a .jsonl.zstd name compresses, and back decompresses, with the same events
        Path z = dir.resolve("converted.jsonl.zstd");
        SessionCompactor.compact(repaired, z, SessionCompactor.DEFAULT_FRAME_BYTES);
        assertThat(SessionVerifier.verify(z).compression()).isEqualTo(Compression.ZSTD);
        assertThat(Referee.get().judge(z).path("types")).isEqualTo(refOut.path("types"));
        Path back = dir.resolve("back.jsonl");
        SessionCompactor.compact(z, back, SessionCompactor.DEFAULT_FRAME_BYTES);
        assertThat(Files.readAllBytes(back)).isEqualTo(Files.readAllBytes(repaired));
    }

    @Test
    void bytesThatAreNeitherZstdNorJsonlAreNotASessionLogWhateverTheName() throws Exception {
        byte[] random = new byte[4096];
        new java.util.Random(21).nextBytes(random);
        random[0] = (byte) 0x8F; // not '{', not the zstd magic's first byte
        for (String name : List.of("session.jsonl.zstd", "session.jsonl", "noise.bin")) {
            Path file = Files.write(dir.resolve(name), random);
            VerifyReport r = SessionVerifier.verify(file);
            assertThat(r.accepted()).as(name).isFalse();
            assertThat(r.error())
                    .as(name)
                    .contains(file + " is not a session log")
                    .contains("neither the zstd frame magic (28 B5 2F FD) nor a JSON line")
                    .contains("it starts with 8F ")
                    .doesNotContain("uncompressed JSONL", "header line");
            assertThat(r.errorOffset()).isEqualTo(0L);
        }
        byte[] utf16 = "{\"type\":\"session\"}\n".getBytes(StandardCharsets.UTF_16);
        Path wide = Files.write(dir.resolve("wide.jsonl"), utf16);
        assertThat(SessionVerifier.verify(wide).error())
                .contains(wide + " is UTF-16 (big-endian) text (it starts with the byte order mark FE FF)")
                .contains("not a session log");
    }

    @Test
    void aNameThatDisagreesWithTheBytesIsAClearReject() throws Exception {
        Path plainAsZstd = dir.resolve("session.jsonl.zstd");
        Files.write(plainAsZstd, PlainCorpus.clean(3, 1, false));
        VerifyReport a = SessionVerifier.verify(plainAsZstd);
        assertThat(a.accepted()).isFalse();
        assertThat(a.compression()).isEqualTo(Compression.NONE);
        assertThat(a.error()).contains("holds uncompressed JSONL").contains("rename it to session.jsonl");
        assertThat(Referee.get().judge(plainAsZstd).path("verdict").asText()).isEqualTo("REJECT");
        Path zstdAsPlain = dir.resolve("session.jsonl");
        Files.write(zstdAsPlain, Corpus.clean(3, 1, false));
        VerifyReport b = SessionVerifier.verify(zstdAsPlain);
        assertThat(b.accepted()).isFalse();
        assertThat(b.compression()).isEqualTo(Compression.ZSTD);
        assertThat(b.error()).contains("holds zstd frames").contains("rename it to session.jsonl.zstd");
        assertThat(Referee.get().judge(zstdAsPlain).path("verdict").asText()).isEqualTo("REJECT");
        // a name that claims nothing (a repair output, a backup) is read by its bytes
        Path neutral = dir.resolve("session.jsonl.repaired");
        Files.write(neutral, PlainCorpus.clean(3, 1, false));
        assertThat(SessionVerifier.verify(neutral).accepted()).isTrue();
        // the writer refuses to create a log whose name claims the other encoding
        assertThatThrownBy(() -> SessionLogWriter.create(
                        dir.resolve("new.jsonl.zstd"), WriterTest.HEADER, new LockFileEpochSource(), PLAIN_P1P2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name it session.jsonl");
    }
}
