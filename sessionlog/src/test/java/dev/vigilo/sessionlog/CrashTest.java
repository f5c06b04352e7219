package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Kills a real writer process with SIGKILL mid-stream, in both encodings; every acknowledged append must survive. */
class CrashTest {
    @TempDir
    Path dir;

    static Process spawn(Class<?> main, String... args) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd =
                new java.util.ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }

    private long runAndKill(Path log, int acks, Compression c) throws Exception {
        Process p = spawn(CrashWriterMain.class, log.toString(), "4", c.jsonName());
        long maxAck = -1;
        int n = 0;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while (n < acks && (line = r.readLine()) != null) {
                if (line.startsWith("ack ")) {
                    maxAck = Math.max(maxAck, Long.parseLong(line.substring(4)));
                    n++;
                }
            }
            p.destroyForcibly(); // SIGKILL while appenders are mid-batch
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(n).as("writer process produced acks").isEqualTo(acks);
        return maxAck;
    }

    @ParameterizedTest
    @EnumSource(Compression.class)
    void acknowledgedAppendsSurviveKillMinus9AndTheLogReopens(Compression c) throws Exception {
        Path log = dir.resolve("crash" + c.suffix());
        long acked = runAndKill(log, 300, c);
        VerifyReport v = SessionVerifier.verify(log);
        assertThat(v.accepted()).as(v.toText()).isTrue();
        assertThat(v.hwSeq()).as("every acknowledged seq is committed").isGreaterThanOrEqualTo(acked);
        assertThat(Referee.get().judge(log).path("verdict").asText()).isEqualTo("ACCEPT");
        // a second process re-opens (new epoch, truncating any uncommitted tail) and is killed again
        long acked2 = runAndKill(log, 200, c);
        VerifyReport v2 = SessionVerifier.verify(log);
        assertThat(v2.accepted()).as(v2.toText()).isTrue();
        assertThat(v2.hwSeq()).isGreaterThanOrEqualTo(acked2);
        assertThat(v2.maxEpoch()).isEqualTo(1);
        assertThat(v2.compression()).isEqualTo(c);
        assertThat(Referee.get().judge(log).path("verdict").asText()).isEqualTo("ACCEPT");
    }
}
