package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reader streams: a large log verifies in a child JVM limited to -Xmx256m, in both encodings. Size: 300 MB by
 * default; {@code -Dvigilo.largeLogMb=2000} runs the 2 GB case (minutes, not for every CI run), and
 * {@code -Dvigilo.largePlainLogMb=...} the uncompressed one.
 */
class LargeLogStreamingTest {
    @TempDir
    Path dir;

    @Test
    void aLargeLogVerifiesWithA256MbHeap() throws Exception {
        check(Long.getLong("vigilo.largeLogMb", 300), false, "none", Compression.ZSTD);
    }

    @Test
    void aLargeUncompressedLogVerifiesWithA256MbHeap() throws Exception {
        check(Long.getLong("vigilo.largePlainLogMb", 300), false, "none", Compression.NONE);
    }

    /** Protocol logs take two passes (plan, then the planned frames); both must stream. */
    @Test
    void aLargeP1LogVerifiesWithA256MbHeap() throws Exception {
        check(Long.getLong("vigilo.largeP1LogMb", 100), true, "p1", Compression.ZSTD);
    }

    /** A decompression bomb (a tiny frame expanding beyond a quarter of the heap) is a clear REJECT, not an OutOfMemoryError. */
    @Test
    void aDecompressionBombIsAClearErrorWithASmallHeap() throws Exception {
        Path log = dir.resolve("bomb.jsonl.zstd");
        String line = "{\"type\":\"todo/write\",\"seq\":0,\"time\":1,\"data\":\"" + "A".repeat(40_000_000) + "\"}\n";
        Files.write(
                log, LogBuilder.concat(List.of(LogBuilder.frame(LogBuilder.header() + "\n"), LogBuilder.frame(line))));
        assertThat(Files.size(log)).isLessThan(100_000);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(List.of(
                        java,
                        "-Xmx64m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        LargeVerifyMain.class.getName(),
                        log.toString()))
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as(out).isEqualTo(1);
        JsonNode r = Json.MAPPER.readTree(out.lines().findFirst().orElseThrow());
        assertThat(r.path("verdict").asText()).isEqualTo("REJECT");
        assertThat(r.path("error").asText()).contains("raise -Xmx");
        assertThat(r.path("error_offset").asLong()).isPositive();
    }

    private void check(long mb, boolean p1, String channel, Compression compression) throws Exception {
        Path log = dir.resolve("large-" + channel + compression.suffix());
        long events = BigLog.generate(log, mb * 1_000_000L, 42, p1, compression);
        assertThat(Files.size(log)).isGreaterThanOrEqualTo(mb * 1_000_000L);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(List.of(
                        java,
                        "-Xmx256m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        LargeVerifyMain.class.getName(),
                        log.toString()))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        JsonNode r = Json.MAPPER.readTree(out.lines().findFirst().orElseThrow());
        assertThat(r.path("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(r.path("stored").asLong()).isEqualTo(events);
        assertThat(r.path("channel").asText()).isEqualTo(channel);
        long maxHeap = Long.parseLong(out.lines()
                .filter(l -> l.startsWith("maxHeap="))
                .findFirst()
                .orElseThrow()
                .substring(8));
        assertThat(maxHeap).isLessThanOrEqualTo(256L * 1024 * 1024);
        long peakHeap = Long.parseLong(out.lines()
                .filter(l -> l.startsWith("peakHeap="))
                .findFirst()
                .orElseThrow()
                .substring(9));
        assertThat(peakHeap).isLessThanOrEqualTo(256L * 1024 * 1024).isPositive();
        assertThat(r.path("compression").asText()).isEqualTo(compression.jsonName());
    }
}
