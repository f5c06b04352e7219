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

/**
 * Kills a real writer process with SIGKILL mid-stream, again and again (each kill a new process and epoch), in both
 * encodings: every acknowledged append survives every kill and the log verifies after each.
 */
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

    /** Kill points per encoding (20 for the session log in all); {@code -Dvigilo.kill.points=N} runs N each. */
    static final int KILLS = Integer.getInteger("vigilo.kill.points", 10);

    @ParameterizedTest
    @EnumSource(Compression.class)
    void acknowledgedAppendsSurviveKillMinus9AndTheLogReopens(Compression c) throws Exception {
        long seed = Long.getLong("vigilo.crash.seed", System.nanoTime());
        System.out.println("CrashTest " + c + ": " + KILLS + " kills, seed " + seed + " (-Dvigilo.crash.seed=" + seed
                + " repeats it)");
        java.util.Random random = new java.util.Random(seed);
        Path log = dir.resolve("crash" + c.suffix());
        for (int kill = 0; kill < KILLS; kill++) {
            // Each process (a new epoch) is killed after a random number of acknowledged appends.
            long acked = runAndKill(log, 1 + random.nextInt(100), c);
            VerifyReport v = SessionVerifier.verify(log);
            String where = "seed " + seed + ", kill " + kill + ": " + v.toText();
            assertThat(v.accepted()).as(where).isTrue();
            assertThat(v.hwSeq())
                    .as(where + ": every acknowledged seq is committed")
                    .isGreaterThanOrEqualTo(acked);
            assertThat(v.maxEpoch()).as(where).isEqualTo(kill);
            assertThat(v.compression()).isEqualTo(c);
            if (kill == 0 || kill == KILLS - 1) {
                assertThat(Referee.get().judge(log).path("verdict").asText()).isEqualTo("ACCEPT");
            }
        }
    }
}
