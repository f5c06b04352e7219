package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The pooled compression contexts of {@link FrameCodec} give exactly the bytes of a stream per frame. */
class FrameCodecTest {

    @Test
    void aPooledContextGivesTheStreamsBytes() {
        Random random = new Random(27);
        for (int len : new int[] {0, 1, 100, 1766, 4096, 65_536, FrameCodec.POOLED_MAX - 1, FrameCodec.POOLED_MAX}) {
            byte[] plain = sample(random, len);
            // twice: the second time from a context used before
            assertThat(FrameCodec.encode(plain, 0, len))
                    .as("%d bytes", len)
                    .isEqualTo(FrameCodec.streamed(plain, 0, len));
            assertThat(FrameCodec.encode(plain, 0, len))
                    .as("%d bytes again", len)
                    .isEqualTo(FrameCodec.streamed(plain, 0, len));
        }
        byte[] large = sample(random, FrameCodec.POOLED_MAX + 1);
        assertThat(FrameCodec.encode(large, 0, large.length)).isEqualTo(FrameCodec.streamed(large, 0, large.length));
        byte[] padded = sample(random, 5000);
        assertThat(FrameCodec.encode(padded, 100, 4000)).isEqualTo(FrameCodec.streamed(padded, 100, 4000));
    }

    @Test
    void concurrentEncodersEachGetTheirFramesBytes() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Boolean>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int seed = t;
                done.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    for (int i = 0; i < 200; i++) {
                        byte[] plain = sample(random, 200 + random.nextInt(8000));
                        byte[] frame = FrameCodec.encode(plain, 0, plain.length);
                        if (!java.util.Arrays.equals(frame, FrameCodec.streamed(plain, 0, plain.length))) {
                            return false;
                        }
                    }
                    return true;
                }));
            }
            for (Future<Boolean> f : done) {
                assertThat(f.get()).isTrue();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** JSON-like lines (compressible, as a session log's are) with some random bytes. */
    private static byte[] sample(Random random, int len) {
        StringBuilder b = new StringBuilder();
        while (b.length() < len) {
            b.append("{\"type\":\"vigilo/case\",\"seq\":")
                    .append(random.nextInt(1000))
                    .append(",\"data\":{\"text\":\"")
                    .append(Long.toHexString(random.nextLong()))
                    .append("\"}}\n");
        }
        return b.substring(0, len).getBytes(StandardCharsets.UTF_8);
    }
}
