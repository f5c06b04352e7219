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
}
