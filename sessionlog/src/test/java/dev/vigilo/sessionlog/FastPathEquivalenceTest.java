package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * The fast row path changes speed, never a verdict: on every input, verify (fast path wherever a line qualifies)
 * and a read that takes the exact Jackson path for every line (a read with a row sink) give the same report,
 * error text included. The exact path is the one {@link RefereeDifferentialTest} holds to the published reader,
 * so this test multiplies that guard over many more inputs than the referee could judge in CI time. Also: the
 * byte-level JSON tape never accepts a line JSON.parse would refuse.
 */
class FastPathEquivalenceTest {
    private static final byte[] RICH = LogBuilder.concat(
            LogBuilder.frames(LogBuilder.header(), LogBuilder.batch(SemanticCorpus.richRows(), 5, 9, 3, 12, 7, 30)));
    private static final byte[] RICH_PLAIN = PlainCorpus.twin(RICH);

    private static String reportOf(Path f, boolean fast) {
        VerifyReport r = fast
                ? SessionVerifier.verify(f)
                : LogReader.read(f, (buf, off, len, kept, whole) -> {}).report();
        return r.toJson();
    }

    private static void assertSame(String name, byte[] content, Compression as) throws Exception {
        Path f = Files.createTempFile("fast", as.suffix());
        try {
            Files.write(f, content);
            assertThat(reportOf(f, true)).as(name).isEqualTo(reportOf(f, false));
        } finally {
            Files.delete(f);
        }
    }

    @Test
    void everyCorpusShapeGetsTheSameReportOnBothPaths() throws Exception {
        Map<String, byte[]> zstd = new LinkedHashMap<>(Corpus.shapes());
        zstd.putAll(SemanticCorpus.shapes());
        long[] seeds = new long[120];
        for (int i = 0; i < seeds.length; i++) {
            seeds[i] = 9000 + i;
        }
        zstd.putAll(SemanticCorpus.mutations(seeds));
        zstd.putAll(Corpus.mutations(seeds));
        for (var e : zstd.entrySet()) {
            assertSame(e.getKey(), e.getValue(), Compression.ZSTD);
        }
        Map<String, byte[]> plain = new LinkedHashMap<>(PlainCorpus.twins(zstd));
        plain.putAll(PlainCorpus.shapes());
        plain.putAll(PlainCorpus.mutations(seeds));
        for (var e : plain.entrySet()) {
            assertSame(e.getKey(), e.getValue(), Compression.NONE);
        }
        assertThat(zstd.size() + plain.size()).isGreaterThan(600);
    }

    /** Bytes that matter to JSON and to the fast path's decisions. */
    private static final byte[] INTERESTING = "\"\\{}[]:,u0-e.+ \t\r/ntfl1925abx".getBytes(StandardCharsets.US_ASCII);

    @Provide
    Arbitrary<List<int[]>> lineEdits() {
        return Combinators.combine(
                        Arbitraries.integers().between(0, 5),
                        Arbitraries.integers().between(0, Integer.MAX_VALUE),
                        Arbitraries.integers().between(0, Integer.MAX_VALUE))
                .as((k, pos, val) -> new int[] {k, pos, val})
                .list()
                .ofMinSize(1)
                .ofMaxSize(4);
    }

    /**
     * Edits inside lines (never a newline): the shapes where the fast path must step aside exactly when needed.
     * Positions fall near a line's start or end, where the envelope and the message's identity live (the long
     * text in between rarely decides anything).
     */
    private static byte[] edit(byte[] base, List<int[]> edits) {
        byte[] b = base.clone();
        for (int[] e : edits) {
            List<int[]> lines = PlainCorpus.lineBounds(b);
            if (lines.size() < 2) {
                break;
            }
            int[] line = lines.get(1 + e[1] % (lines.size() - 1));
            int len = line[1] - line[0];
            int k = (e[1] / lines.size()) & 0x3ff;
            int pos = (k & 1) == 0
                    ? line[0] + (k >>> 1) % Math.min(len, 320)
                    : line[1] - 1 - (k >>> 1) % Math.min(len, 120);
            if (b[pos] == '\n') {
                continue;
            }
            byte v = switch (e[2] % 4) {
                case 0 -> INTERESTING[(e[2] >>> 2) % INTERESTING.length];
                case 1 -> (byte) ((e[2] >>> 2) & 0x1f); // a control character
                case 2 -> (byte) (0x80 | ((e[2] >>> 2) & 0x7f)); // a byte of a (possibly broken) UTF-8 sequence
                default -> (byte) ('a' + (e[2] >>> 2) % 26);
            };
            if (v == '\n') {
                v = ' ';
            }
            switch (e[0]) {
                case 0, 1 -> b[pos] = v;
                case 2 -> { // insert
                    byte[] c = new byte[b.length + 1];
                    System.arraycopy(b, 0, c, 0, pos);
                    c[pos] = v;
                    System.arraycopy(b, pos, c, pos + 1, b.length - pos);
                    b = c;
                }
                case 3 -> { // delete one byte
                    byte[] c = new byte[b.length - 1];
                    System.arraycopy(b, 0, c, 0, pos);
                    System.arraycopy(b, pos + 1, c, pos, b.length - pos - 1);
                    b = c;
                }
                default -> { // duplicate a stretch (duplicate keys, repeated members)
                    int n = Math.min(1 + (e[2] % 40), b.length - pos);
                    byte[] c = new byte[b.length + n];
                    System.arraycopy(b, 0, c, 0, pos + n);
                    System.arraycopy(b, pos, c, pos + n, b.length - pos);
                    b = c;
                }
            }
        }
        return b;
    }

    @Property(tries = 1500)
    void editedUncompressedLogsGetTheSameReportOnBothPaths(@ForAll("lineEdits") List<int[]> edits) throws Exception {
        assertSame(edits.toString(), edit(RICH_PLAIN, edits), Compression.NONE);
    }

    @Property(tries = 300)
    void editedZstdLogsGetTheSameReportOnBothPaths(@ForAll("lineEdits") List<int[]> edits) throws Exception {
        byte[] plain = edit(RICH_PLAIN, edits);
        // re-frame the edited lines: header frame, then batches of lines
        List<byte[]> lines = new ArrayList<>();
        int s = 0;
        for (int i = 0; i < plain.length; i++) {
            if (plain[i] == '\n') {
                lines.add(java.util.Arrays.copyOfRange(plain, s, i + 1));
                s = i + 1;
            }
        }
        List<byte[]> frames = new ArrayList<>();
        for (int i = 0; i < lines.size(); i += i == 0 ? 1 : 6) {
            int to = i == 0 ? 1 : Math.min(lines.size(), i + 6);
            byte[] batch = LogBuilder.concat(lines.subList(i, to));
            frames.add(FrameCodec.encode(batch, 0, batch.length));
        }
        assertSame(edits.toString(), LogBuilder.concat(frames), Compression.ZSTD);
    }

    @Property(tries = 3000)
    void theTapeNeverAcceptsWhatJsonParseRefuses(@ForAll("lineEdits") List<int[]> edits) {
        byte[] plain = edit(RICH_PLAIN, edits);
        JsonTape t = new JsonTape();
        int s = 0;
        for (int i = 0; i < plain.length; i++) {
            if (plain[i] != '\n') {
                continue;
            }
            int r = t.parse(plain, s, plain.length);
            if (r >= 0) {
                assertThat(r).isEqualTo(i);
                assertThat(Json.parseLine(plain, s, i - s))
                        .as(new String(plain, s, i - s, StandardCharsets.UTF_8))
                        .isNotNull();
            }
            s = i + 1;
        }
    }
}
