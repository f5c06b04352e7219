package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The in-memory encoder produces exactly the writer's bytes, and refuses what the writer refuses. */
class SessionLogEncoderTest {
    @TempDir
    Path dir;

    @Test
    void encodesTheWritersBytes() throws Exception {
        // turns with surface events, then a run of text deltas the writer packs, in batches of 7
        List<ObjectNode> events = new java.util.ArrayList<>(WriterTest.parse(LogBuilder.turns(9, 4, false)));
        for (int i = 0; i < 5; i++) {
            ObjectNode c = Json.MAPPER
                    .createObjectNode()
                    .put("type", "assistant/chunk")
                    .put("time", 1_760_000_100_000L + i);
            c.putObject("data")
                    .put("turn", 4)
                    .put("step", 1)
                    .putObject("chunk")
                    .put("type", "text-delta")
                    .put("index", 0)
                    // escapes and non-ASCII as the writer renders them (one generator per batch must
                    // write each line as a serialization of its own would)
                    .put("text", "piece " + i + (i == 0 ? " \u00e9 \ud83d\ude00 \u2028 \u0001 </script> \"q\"" : ""));
            events.add(c);
        }
        for (WriterOptions opts :
                List.of(new WriterOptions(true, false, false, true), new WriterOptions(false, false, true, false))) {
            Path f = dir.resolve("w" + opts.commitRecords() + ".jsonl.zstd");
            try (SessionLogWriter w =
                    SessionLogWriter.create(f, WriterTest.HEADER, EpochSource.fixed(new Epoch(4)), opts)) {
                for (int i = 0; i < events.size(); i += 7) {
                    w.append(events.subList(i, Math.min(events.size(), i + 7)));
                }
            }
            SessionLogEncoder e = new SessionLogEncoder(WriterTest.HEADER, new Epoch(4), opts);
            AppendResult last = null;
            for (int i = 0; i < events.size(); i += 7) {
                last = e.append(events.subList(i, Math.min(events.size(), i + 7)));
            }
            byte[] bytes = e.toByteArray();
            assertThat(bytes).isEqualTo(Files.readAllBytes(f));
            if (opts.packChunks()) {
                assertThat(new String(
                                com.github.luben.zstd.Zstd.decompress(bytes, 1 << 20),
                                java.nio.charset.StandardCharsets.UTF_8))
                        .contains("text-chunks");
            }
            assertThat(last.hw().byteOffset()).isEqualTo(bytes.length);
            VerifyReport v = SessionVerifier.verify(f);
            assertThat(last.hw().lastSeq()).isEqualTo(v.hwSeq());
            if (opts.commitRecords()) {
                assertThat(v.maxEpoch()).isEqualTo(4);
            }
        }
    }

    @Test
    void refusesWhatTheWriterRefusesAndEncodesNothingOfIt() {
        SessionLogEncoder e = new SessionLogEncoder(WriterTest.HEADER, new Epoch(1), WriterOptions.plain());
        int before = e.toByteArray().length;
        ObjectNode bad = Json.MAPPER.createObjectNode().put("type", "no/such-type");
        bad.putObject("data");
        assertThatThrownBy(() -> e.append(List.of(WriterTest.todo(1), bad)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no/such-type");
        assertThat(e.toByteArray()).hasSize(before);
        assertThat(e.append(List.of(WriterTest.todo(2))).firstSeq().value()).isZero();
        assertThatThrownBy(() -> new SessionLogEncoder(WriterTest.HEADER, new Epoch(1), WriterOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void eventsAddedAsTheyHappenGiveTheBytesOfBatchAppends() throws Exception {
        // surface turns, then runs of text deltas the packer joins, added in uneven bursts across batches of 5
        List<ObjectNode> events = new java.util.ArrayList<>(WriterTest.parse(LogBuilder.turns(6, 3, false)));
        for (int i = 0; i < 13; i++) {
            ObjectNode c = Json.MAPPER
                    .createObjectNode()
                    .put("type", "assistant/chunk")
                    .put("time", 1_760_000_100_000L + i);
            c.putObject("data")
                    .put("turn", 3)
                    .put("step", 1)
                    .putObject("chunk")
                    .put("type", "text-delta")
                    .put("index", 0)
                    .put("text", "piece " + i);
            events.add(c);
        }
        events.add(WriterTest.todo(9));
        for (WriterOptions opts :
                List.of(new WriterOptions(true, false, false, true), new WriterOptions(false, false, true, false))) {
            for (int batch : new int[] {1, 5, 256}) {
                SessionLogEncoder appended = new SessionLogEncoder(WriterTest.HEADER, new Epoch(3), opts);
                for (int i = 0; i < events.size(); i += batch) {
                    appended.append(events.subList(i, Math.min(events.size(), i + batch)));
                }
                SessionLogEncoder added = new SessionLogEncoder(WriterTest.HEADER, new Epoch(3), opts, batch);
                int[] bursts = {1, 3, 0, 7, 2, 4};
                for (int i = 0, k = 0; i < events.size(); k++) {
                    int to = Math.min(events.size(), i + bursts[k % bursts.length]);
                    added.add(events.subList(i, to));
                    i = to;
                }
                assertThat(added.toByteArray())
                        .as("%s, batches of %d", opts, batch)
                        .isEqualTo(appended.toByteArray());
            }
        }
    }

    @Test
    void anAddTheRulesRefuseEncodesNothingOfIt() {
        SessionLogEncoder e = new SessionLogEncoder(WriterTest.HEADER, new Epoch(1), WriterOptions.plain(), 4);
        e.add(List.of(WriterTest.todo(1), WriterTest.todo(2), WriterTest.todo(3)));
        ObjectNode bad = Json.MAPPER.createObjectNode().put("type", "no/such-type");
        bad.putObject("data");
        assertThatThrownBy(() -> e.add(List.of(WriterTest.todo(4), WriterTest.todo(5), bad)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no/such-type");
        e.add(List.of(WriterTest.todo(4)));
        SessionLogEncoder same = new SessionLogEncoder(WriterTest.HEADER, new Epoch(1), WriterOptions.plain());
        same.append(List.of(WriterTest.todo(1), WriterTest.todo(2), WriterTest.todo(3), WriterTest.todo(4)));
        assertThat(e.toByteArray()).isEqualTo(same.toByteArray());
    }
}
