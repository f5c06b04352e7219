package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a real {@code run create} process (SIGKILL via destroyForcibly) at random points, then repeats the command
 * until it publishes, and compares every plan file with an uninterrupted run's (same run id and upload id, separate
 * database and store).
 */
class CrashRecoveryTest {
    static final int CASES = 30_000;
    static final UUID UPLOAD = UUID.fromString("00000000-0000-4000-8000-0000000000c5");
    static final long LEASE_MILLIS = 1500;

    @Test
    void killNineAtRandomPointsThenRepeatPublishesAByteIdenticalPlan(@TempDir Path dir) throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        UUID run = UUID.randomUUID();
        Path profile = dir.resolve("profile.yaml");
        Files.writeString(profile, PlanFixture.PROFILE);
        try (PlanFixture crashed = new PlanFixture(dir.resolve("crashed"), CASES, UPLOAD);
                PlanFixture clean = new PlanFixture(dir.resolve("clean"), CASES, UPLOAD)) {
            List<String> log = new ArrayList<>();
            int kills = 0;
            for (int attempt = 0; attempt < 8 && kills < 4; attempt++) {
                Process p = start(crashed, run, profile, dir.resolve("out-" + attempt + ".txt"));
                long delay = 1500 + random.nextInt(4000) + attempt * 800L; // later attempts first re-verify the prefix
                if (p.waitFor(delay, TimeUnit.MILLISECONDS)) {
                    log.add("attempt " + attempt + " exited " + p.exitValue() + " before the kill at " + delay + " ms");
                    if (p.exitValue() == 0) {
                        break;
                    }
                    Thread.sleep(LEASE_MILLIS);
                    continue;
                }
                p.destroyForcibly().waitFor();
                kills++;
                log.add("attempt " + attempt + " killed after " + delay + " ms, plan " + cursor(crashed, run));
                if (random.nextBoolean()) {
                    Thread.sleep(LEASE_MILLIS); // otherwise the next attempt may meet the dead creator's live lease
                }
            }
            assertThat(kills).as("seed %d: %s", seed, log).isGreaterThanOrEqualTo(2);
            int exit = -1;
            for (int attempt = 0; attempt < 20 && exit != 0; attempt++) {
                Path out = dir.resolve("final-" + attempt + ".txt");
                Process p = start(crashed, run, profile, out);
                assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
                exit = p.exitValue();
                log.add("final attempt " + attempt + " exited " + exit + ": " + lastLine(out));
                if (exit == 3) {
                    Thread.sleep(LEASE_MILLIS); // the killed creator's lease expires
                }
            }
            assertThat(exit).as("seed %d: %s", seed, log).isZero();
            System.out.println("crash test seed " + seed + ":\n  " + String.join("\n  ", log));
            RunStatus status = new RunStatusReader(crashed.control.jdbi()).status(run);
            assertThat(status.status()).isEqualTo(RunState.CREATING);
            assertThat(status.creationProgress().planChunkCursor()).isEqualTo(300);

            clean.preparation(PlanFixture.fast())
                    .create(new CreateRequest(ProfileInput.file(profile), UPLOAD, Optional.of(run), false));
            TreeMap<String, byte[]> expected = clean.planFiles(run);
            TreeMap<String, byte[]> actual = crashed.planFiles(run);
            PreparationTest.assertIdentical(expected, actual);
            assertThat(new RunStatusReader(crashed.control.jdbi()).status(run).shards())
                    .isEqualTo(new RunStatusReader(clean.control.jdbi())
                            .status(run)
                            .shards());
        }
    }

    private static String lastLine(Path out) throws java.io.IOException {
        List<String> lines = Files.readAllLines(out);
        return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
    }

    private static String cursor(PlanFixture fx, UUID run) {
        RunStatus s = new RunStatusReader(fx.control.jdbi()).statusOrNull(run);
        return s == null
                ? "(no run yet)"
                : s.creationProgress().planStatus() + " " + s.creationProgress().planChunkCursor() + "/"
                        + s.expectedChunks();
    }

    private static Process start(PlanFixture fx, UUID run, Path profile, Path out) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = List.of(
                java,
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                CreateMain.class.getName(),
                fx.url,
                fx.storeRoot.toString(),
                UPLOAD.toString(),
                run.toString(),
                profile.toString(),
                Long.toString(LEASE_MILLIS),
                "4",
                "40");
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
    }
}
