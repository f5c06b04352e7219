package dev.vigilo.sessionlog;

import dev.vigilo.common.io.AtomicFiles;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Writes a large valid log fast (no per-batch fsync): complete turns with tool outputs of pseudo-random text
 * (compresses ~1.5x, so a 300 MB log holds ~450 MB of JSONL), one zstd frame per batch of 20..100 events.
 */
final class BigLog {
    private BigLog() {}

    /** @return number of stored events written */
    static long generate(Path out, long targetBytes, long seed) throws IOException {
        return generate(out, targetBytes, seed, false);
    }

    /** @param p1 end every turn's frame with a P1 commit record (one frame per turn) */
    static long generate(Path out, long targetBytes, long seed, boolean p1) throws IOException {
        return generate(out, targetBytes, seed, p1, Compression.ZSTD);
    }

    /** As above, in either encoding (uncompressed: the same lines, each batch written as it is). */
    static long generate(Path out, long targetBytes, long seed, boolean p1, Compression compression)
            throws IOException {
        boolean zstd = compression == Compression.ZSTD;
        SplittableRandom r = new SplittableRandom(seed);
        char[] alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,;:()".toCharArray();
        long events = 0;
        try (FileChannel ch = FileChannel.open(out, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            byte[] header = (LogBuilder.header() + "\n").getBytes(StandardCharsets.UTF_8);
            AtomicFiles.writeFully(ch, zstd ? FrameCodec.encode(header, 0, header.length) : header);
            LogBuilder.Events ev = new LogBuilder.Events(seed, 0);
            int turn = 0;
            StringBuilder text = new StringBuilder();
            while (ch.size() < targetBytes) {
                turn++;
                ev.out.clear();
                ev.turnStart(turn).user(turn, "task " + turn);
                for (int step = 1; step <= 3; step++) {
                    ev.stepStart(turn, step);
                    List<String> ids = ev.assistant(turn, step, step < 3 ? 2 : 0, "answer " + turn);
                    for (String id : ids) {
                        long cs = ev.toolCall(turn, step, id);
                        text.setLength(0);
                        int n = 2000 + r.nextInt(6000);
                        for (int i = 0; i < n; i++) {
                            text.append(alphabet[r.nextInt(alphabet.length)]);
                        }
                        ev.toolResult(turn, step, id, cs, text.toString());
                    }
                    ev.stepEnd(turn, step);
                }
                ev.turnEnd(turn);
                if (p1) {
                    ev.out.add(ProtocolLogs.commit(ev.seq, 1));
                    ev.seq++;
                }
                // batches of 20..100 events cut at turn boundaries keep this simple: one frame per turn chunk
                List<String> rows = ev.rows();
                int i = 0;
                while (i < rows.size()) {
                    int n = p1 ? rows.size() : Math.min(rows.size() - i, 20 + r.nextInt(81));
                    byte[] plain = LogBuilder.lines(rows.subList(i, i + n)).getBytes(StandardCharsets.UTF_8);
                    AtomicFiles.writeFully(ch, zstd ? FrameCodec.encode(plain, 0, plain.length) : plain);
                    i += n;
                }
                events += rows.size();
            }
            ch.force(true);
        }
        return events;
    }
}
