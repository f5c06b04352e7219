package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The reader never crashes on arbitrary bytes: every input yields a verdict (REJECT with an error and,
 * where one applies, an offset), never an exception. Bounded tries so CI time stays small.
 */
class ReaderFuzzTest {
    private static final byte[] BASE = Corpus.clean(5, 3, true);
    private static final byte[] P1 =
            LogBuilder.concat(new ProtocolLogs().p1(0, 4, 0).p1(5, 9, 1).p1(3, 6, 0).frames);

    private static VerifyReport verifyBytes(byte[] content, byte[] manifest) throws Exception {
        Path f = Files.createTempFile("fuzz", ".jsonl.zstd");
        try {
            Files.write(f, content);
            if (manifest != null) {
                Files.write(Manifest.pathFor(f), manifest);
            }
            return SessionVerifier.verify(f);
        } finally {
            Files.deleteIfExists(Manifest.pathFor(f));
            Files.delete(f);
        }
    }

    private static void assertWellFormed(VerifyReport r) {
        assertThat(r.verdict()).isIn("ACCEPT", "REJECT");
        if (r.accepted()) {
            assertThat(r.error()).isNull();
            assertThat(r.events()).isEqualTo(r.stored() + r.closers());
        } else {
            assertThat(r.error()).isNotBlank();
            assertThat(r.events()).isZero();
        }
        assertThat(r.toJson()).startsWith("{\"verdict\":");
    }

    @Property(tries = 1000)
    void arbitraryBytesGetAVerdict(@ForAll byte[] bytes) throws Exception {
        assertWellFormed(verifyBytes(bytes, null));
    }

    @Property(tries = 1000)
    void arbitraryBytesAfterAValidHeaderGetAVerdict(@ForAll byte[] bytes) throws Exception {
        byte[] header = LogBuilder.frame(LogBuilder.header() + "\n");
        assertWellFormed(verifyBytes(LogBuilder.concat(List.of(header, bytes)), null));
    }

    @Provide
    Arbitrary<List<int[]>> edits() {
        return Combinators.combine(
                        Arbitraries.integers().between(0, 3),
                        Arbitraries.integers().between(0, Integer.MAX_VALUE),
                        Arbitraries.integers().between(0, 255))
                .as((k, pos, val) -> new int[] {k, pos, val})
                .list()
                .ofMinSize(1)
                .ofMaxSize(6);
    }

    @Property(tries = 2000)
    void mutatedLogsGetAVerdict(@ForAll("edits") List<int[]> edits, @ForAll boolean protocol) throws Exception {
        byte[] b = (protocol ? P1 : BASE).clone();
        for (int[] e : edits) {
            if (b.length == 0) {
                break;
            }
            int pos = e[1] % b.length;
            switch (e[0]) {
                case 0 -> b[pos] = (byte) e[2];
                case 1 -> b = java.util.Arrays.copyOf(b, pos);
                case 2 -> b[pos] ^= (byte) (1 << (e[2] & 7));
                default -> {
                    byte[] c = new byte[b.length + 1];
                    System.arraycopy(b, 0, c, 0, pos);
                    c[pos] = (byte) e[2];
                    System.arraycopy(b, pos, c, pos + 1, b.length - pos);
                    b = c;
                }
            }
        }
        assertWellFormed(verifyBytes(b, null));
    }

    @Property(tries = 500)
    void arbitraryManifestsGetAVerdict(@ForAll byte[] manifest, @ForAll long committed, @ForAll int frames)
            throws Exception {
        assertWellFormed(verifyBytes(P1, manifest));
        String m = "{\"format\":\"vigilo-session-manifest\",\"version\":1,\"epoch\":1,\"endSeq\":9,\"frames\":" + frames
                + ",\"committedBytes\":" + committed + ",\"lastFrameChecksum\":\"00000000\",\"epochs\":[]}";
        assertWellFormed(verifyBytes(P1, m.getBytes()));
    }
}
