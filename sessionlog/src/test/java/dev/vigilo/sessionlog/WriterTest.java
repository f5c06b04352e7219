package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.FencedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WriterTest {
    @TempDir
    Path dir;

    static final SessionHeader HEADER = new SessionHeader(LogBuilder.ID, LogBuilder.CWD, 1760000000000L, 0);

    static List<ObjectNode> parse(List<String> rows) {
        List<ObjectNode> out = new ArrayList<>();
        for (String r : rows) {
            try {
                ObjectNode n = (ObjectNode) Json.MAPPER.readTree(r);
                n.remove("seq");
                out.add(n);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
        return out;
    }

    static ObjectNode todo(int i) {
        ObjectNode n = Json.MAPPER.createObjectNode();
        n.put("type", "todo/write")
                .put("time", 1000 + i)
                .putObject("data")
                .putArray("todos")
                .add("t" + i);
        return n;
    }

    private Path writeTurns(String name, WriterOptions opts) {
        Path f = dir.resolve(name + ".jsonl.zstd");
        List<ObjectNode> events = parse(LogBuilder.turns(21, 4, false));
        try (SessionLogWriter w = SessionLogWriter.create(f, HEADER, new LockFileEpochSource(), opts)) {
            for (int i = 0; i < events.size(); i += 7) {
                w.append(events.subList(i, Math.min(events.size(), i + 7)));
            }
        }
        return f;
    }

    @Test
    void plainLogsAreByteCompatibleAndAcceptedByTheRefereeWithTheSameEvents() throws Exception {
        Path f = writeTurns("plain", WriterOptions.plain());
        byte[] b = Files.readAllBytes(f);
        assertThat(b[4]).as("frame descriptor: checksum, no content size").isEqualTo((byte) 0x04);
        assertThat(b[5]).as("window descriptor at level 3").isEqualTo((byte) 0x58);
        VerifyReport v = SessionVerifier.verify(f);
        JsonNode ref = Referee.get().judge(f);
        assertThat(ref.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(v.channel()).isEqualTo(Channel.NONE);
        assertThat(v.events()).isEqualTo(ref.path("events").asLong());
        assertThat(RefereeDifferentialTest.vigiloTypes(f)).containsExactlyElementsOf(toList(ref.path("types")));
    }

    static List<String> toList(JsonNode arr) {
        List<String> l = new ArrayList<>();
        arr.forEach(t -> l.add(t.asText()));
        return l;
    }

    @Test
    void protocolLogsAreAcceptedByTheReferee() throws Exception {
        Path f = writeTurns("p1p2", WriterOptions.defaults());
        VerifyReport v = SessionVerifier.verify(f);
        JsonNode ref = Referee.get().judge(f);
        assertThat(ref.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(v.channel()).isEqualTo(Channel.P2);
        assertThat(v.manifestState()).isEqualTo("consistent");
        assertThat(v.events()).isEqualTo(ref.path("events").asLong());
        assertThat(RefereeDifferentialTest.vigiloTypes(f)).containsExactlyElementsOf(toList(ref.path("types")));
    }

    @Test
    void lockFileEpochsAreMonotonicAndExclusive() {
        Path f = dir.resolve("epochs.jsonl.zstd");
        LockFileEpochSource src = new LockFileEpochSource();
        try (SessionLogWriter w = SessionLogWriter.create(f, HEADER, src, WriterOptions.defaults())) {
            assertThat(w.epoch()).isEqualTo(new Epoch(0));
            w.append(List.of(todo(0)));
            assertThatThrownBy(() -> SessionLogWriter.open(f, src, WriterOptions.defaults()))
                    .isInstanceOf(FencedException.class)
                    .hasMessageContaining("another writer holds");
        }
        try (SessionLogWriter w = SessionLogWriter.open(f, src, WriterOptions.defaults())) {
            assertThat(w.epoch()).isEqualTo(new Epoch(1));
            w.append(List.of(todo(1)));
        }
        try (SessionLogWriter w = SessionLogWriter.open(f, src, WriterOptions.defaults())) {
            assertThat(w.epoch()).isEqualTo(new Epoch(2));
        }
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.accepted()).isTrue();
        assertThat(v.maxEpoch()).isEqualTo(1);
        assertThat(v.stored()).isEqualTo(4); // two events + two commit records
    }

    @Test
    void aStaleWriterIsFencedByTheManifestAndByReaders() {
        Path f = dir.resolve("stale.jsonl.zstd");
        SessionLogWriter stale =
                SessionLogWriter.create(f, HEADER, EpochSource.fixed(new Epoch(0)), WriterOptions.defaults());
        stale.append(List.of(todo(0), todo(1)));
        try (SessionLogWriter fresh =
                SessionLogWriter.open(f, EpochSource.fixed(new Epoch(1)), WriterOptions.defaults())) {
            fresh.append(List.of(todo(2)));
            assertThatThrownBy(() -> stale.append(List.of(todo(3))))
                    .isInstanceOf(FencedException.class)
                    .hasMessageContaining("epoch 1");
            assertThatThrownBy(() -> stale.append(List.of(todo(4)))).isInstanceOf(FencedException.class);
            fresh.append(List.of(todo(5)));
        }
        stale.close();
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.accepted()).isTrue();
        assertThat(v.fenced()).as("the stale batch is fenced by its epoch").isEqualTo(2);
        assertThat(v.stored()).isEqualTo(7); // [0,1,c][2,c][5,c]
        assertThatThrownBy(() -> SessionLogWriter.open(f, EpochSource.fixed(new Epoch(0)), WriterOptions.defaults()))
                .isInstanceOf(FencedException.class);
    }

    @Test
    void invalidEventsAreRefusedBeforeAnythingIsWritten() {
        Path f = dir.resolve("bad.jsonl.zstd");
        try (SessionLogWriter w =
                SessionLogWriter.create(f, HEADER, new LockFileEpochSource(), WriterOptions.defaults())) {
            ObjectNode unknown = Json.MAPPER.createObjectNode().put("type", "plugin/x");
            unknown.putObject("data");
            assertThatThrownBy(() -> w.append(List.of(unknown)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("newer writer");
            ObjectNode commit =
                    Json.MAPPER.createObjectNode().put("type", "vigilo/commit").put("ignorable", true);
            commit.putObject("data");
            assertThatThrownBy(() -> w.append(List.of(commit)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("reserved");
        }
        assertThat(SessionVerifier.verify(f).stored()).isZero();
    }

    @Test
    void groupCommitSharesFramesAcrossConcurrentAppenders() throws Exception {
        Path f = dir.resolve("group.jsonl.zstd");
        int threads = 16, per = 40;
        List<long[]> ranges = Collections.synchronizedList(new ArrayList<>());
        try (SessionLogWriter w =
                SessionLogWriter.create(f, HEADER, new LockFileEpochSource(), WriterOptions.defaults())) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                fs.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < per; i++) {
                        AppendResult r = w.append(List.of(todo(id * 1000 + i), todo(id * 1000 + i)));
                        assertThat(r.hw().lastSeq())
                                .isGreaterThanOrEqualTo(r.lastSeq().value());
                        ranges.add(new long[] {r.firstSeq().value(), r.lastSeq().value()});
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> x : fs) {
                x.get();
            }
            pool.shutdown();
        }
        assertThat(ranges).hasSize(threads * per);
        ranges.forEach(r -> assertThat(r[1] - r[0]).isEqualTo(1));
        assertThat(ranges.stream().map(r -> r[0]).distinct().count()).isEqualTo(threads * per);
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.accepted()).isTrue();
        long frames = v.frames() - 1;
        assertThat(v.stored()).isEqualTo(threads * per * 2L + frames);
        assertThat(frames).as("appends shared frames").isLessThan(threads * per);
    }

    @Test
    void withoutGroupCommitEveryAppendIsItsOwnFrame() throws Exception {
        Path f = dir.resolve("single.jsonl.zstd");
        try (SessionLogWriter w =
                SessionLogWriter.create(f, HEADER, new LockFileEpochSource(), new WriterOptions(true, false, false))) {
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                fs.add(pool.submit(() -> {
                    for (int i = 0; i < 10; i++) {
                        w.append(List.of(todo(i)));
                    }
                    return null;
                }));
            }
            for (Future<?> x : fs) {
                x.get();
            }
            pool.shutdown();
        }
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.frames()).isEqualTo(41);
        assertThat(v.channel()).isEqualTo(Channel.P1);
    }

    @Test
    void reopeningTruncatesTheUncommittedTail() throws Exception {
        Path f = dir.resolve("reopen.jsonl.zstd");
        try (SessionLogWriter w =
                SessionLogWriter.create(f, HEADER, new LockFileEpochSource(), WriterOptions.defaults())) {
            w.append(List.of(todo(0)));
        }
        long committed = Files.size(f);
        Files.write(f, LogBuilder.frame(ProtocolLogs.filler(2) + "\n"), java.nio.file.StandardOpenOption.APPEND);
        try (SessionLogWriter w = SessionLogWriter.open(f, new LockFileEpochSource(), WriterOptions.defaults())) {
            assertThat(Files.size(f)).isEqualTo(committed);
            assertThat(w.append(List.of(todo(1))).firstSeq()).isEqualTo(new Seq(2));
        }
        VerifyReport v = SessionVerifier.verify(f);
        assertThat(v.accepted()).isTrue();
        assertThat(v.manifestState()).isEqualTo("consistent");
        assertThat(v.stored()).isEqualTo(4);
    }
}
