package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The writer refuses an append that the surface rules would reject, and only that append. */
class WriterSurfaceTest {
    @TempDir
    Path dir;

    private static ObjectNode event(String json) {
        try {
            return (ObjectNode) Json.MAPPER.readTree(json);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static ObjectNode userReplace(long start, long end, String sources) {
        return event("{\"type\":\"user/message\",\"time\":5,\"data\":{\"id\":\"c" + start
                + "\",\"role\":\"user\",\"source\":{\"kind\":\"user\"},\"content\":[]},"
                + "\"surfaceOp\":{\"op\":\"replace\",\"start\":" + start + ",\"end\":" + end + "},\"sourceEventSeqs\":"
                + sources + "}");
    }

    private static ObjectNode rewrite(String call, long target, String text) {
        return event("{\"type\":\"tool/result\",\"time\":9,\"data\":"
                + LogBuilder.Events.toolResultData(1, 1, call, text) + ",\"surfaceOp\":{\"op\":\"replace\",\"start\":"
                + target + ",\"end\":" + target + "},\"sourceEventSeqs\":[" + target + "]}");
    }

    @Test
    void appendsThatBreakTheSurfaceRulesAreRefusedAndTheLogStaysReadable() throws Exception {
        Path f = dir.resolve("surface.jsonl.zstd");
        // seqs 0 turn/start, 1 user, 2 step/start, 3 assistant (one call), 4 tool/call, 5 tool/result: surface [1, 3,
        // 5]
        LogBuilder.Events e = new LogBuilder.Events(31, 0);
        e.turnStart(1).user(1, "hi").stepStart(1, 1);
        String call = e.assistant(1, 1, 1, "calling").get(0);
        e.toolResult(1, 1, call, e.toolCall(1, 1, call), "full output");
        try (SessionLogWriter w =
                SessionLogWriter.create(f, WriterTest.HEADER, new LockFileEpochSource(), WriterOptions.plain())) {
            w.append(WriterTest.parse(e.rows()));
            assertThatThrownBy(() -> w.append(List.of(userReplace(2, 3, "[2,3]"))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("start seq 2 not found in surface");
            assertThat(w.append(List.of(userReplace(1, 3, "[1,3]"))).firstSeq().value())
                    .isEqualTo(6); // surface [6, 5]
            // a refused append takes nothing with it: its first (valid) event is not written either
            assertThatThrownBy(() -> w.append(List.of(WriterTest.todo(1), userReplace(1, 1, "[1]"))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("start seq 1 not found in surface");
            assertThat(w.append(List.of(WriterTest.todo(2))).firstSeq().value()).isEqualTo(7);
            // the first replace applies (surface [9]) before the second fails: the fold is rolled back to [6, 5]
            assertThatThrownBy(() -> w.append(List.of(userReplace(6, 5, "[5,6]"), userReplace(6, 6, "[6]"))))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("start seq 6 not found in surface");
            assertThat(w.append(List.of(rewrite(call, 5, "short"))).firstSeq().value())
                    .isEqualTo(8); // 5 is a current tool/result again
        }
        // a re-opened writer continues from the surface it reads
        try (SessionLogWriter w = SessionLogWriter.open(f, new LockFileEpochSource(), WriterOptions.defaults())) {
            assertThatThrownBy(() -> w.append(List.of(userReplace(3, 3, "[3]"))))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThat(w.append(List.of(rewrite(call, 8, "shorter"))).firstSeq().value())
                    .isEqualTo(9);
            ObjectNode changed = event("{\"type\":\"tool/result\",\"time\":9,\"data\":"
                    + LogBuilder.Events.toolResultData(2, 1, call, "short")
                    + ",\"surfaceOp\":{\"op\":\"replace\",\"start\":9,\"end\":9},\"sourceEventSeqs\":[9]}");
            assertThatThrownBy(() -> w.append(List.of(changed)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("may change only content");
            w.append(List.of(WriterTest.todo(3)));
        }
        RefereeDifferentialTest.Row row = RefereeDifferentialTest.compare("surface", f);
        assertThat(row.same()).as(row.referee() + " / " + row.vigilo()).isTrue();
        // stored: 6 + replace + todo + rewrite, then rewrite + todo each followed by its P1 commit record (written
        // after re-opening; refused appends write no frame); closers: step/end and turn/end of the open turn
        assertThat(row.referee()).startsWith("ACCEPT events=15 stored=13 closers=2");
    }
}
