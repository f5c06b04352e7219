package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.crash.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 a real writer process mid-stream, repeatedly: every acknowledged batch survives, every
 * batch is all-or-none.
 */
class CrashRecoveryTest {
    /** Kills per run of the test; {@code -Dvigilo.kill.points=N} runs more. */
    static final int KILLS = Integer.getInteger("vigilo.kill.points", 20);

    @TempDir
    Path root;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES) // 20 and more child JVMs, each loading Lance
    void killedWriterLosesNoAcknowledgedBatchAndNeverLeavesHalfABatch() throws Exception {
        // First fixed counts (a few batches, one and two memtables' worth), then random ones.
        killRepeatedly("crash", 1, KILLS, new int[] {5, 9, 17}, 20);
    }

    /** Eight threads sharing group-committed puts: the kills land between, inside and after shared puts. */
    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void killedGroupCommittingWriterLosesNoAcknowledgedBatchAndNeverLeavesHalfABatch() throws Exception {
        killRepeatedly("group", 8, Math.max(5, KILLS / 4), new int[] {3, 64}, 80);
    }

    private void killRepeatedly(String experiment, int threads, int kills, int[] fixed, int randomBound)
            throws Exception {
        long seed = Long.getLong("vigilo.crash.seed", System.nanoTime());
        System.out.println("CrashRecoveryTest (" + experiment + "): " + kills + " kills, seed " + seed
                + " (-Dvigilo.crash.seed=" + seed + " repeats it)");
        java.util.Random random = new java.util.Random(seed);
        Set<Integer> acked = new HashSet<>();
        for (int round = 0; round < kills; round++) {
            Process p = new ProcessBuilder(ChildJvm.command(
                            root,
                            CrashWriterMain.class.getName(),
                            root.toString(),
                            "pipe",
                            experiment,
                            "crasher",
                            Integer.toString(round * 100_000),
                            Integer.toString(threads)))
                    .redirectErrorStream(false)
                    .start();
            List<Integer> mine = new ArrayList<>();
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                int target = round < fixed.length ? fixed[round] : 1 + random.nextInt(randomBound);
                while ((line = out.readLine()) != null) {
                    if (line.startsWith("ACK ")) {
                        mine.add(Integer.parseInt(line.substring(4)));
                        if (mine.size() >= target) {
                            break;
                        }
                    }
                }
                p.destroyForcibly(); // SIGKILL while the writer is in the middle of further puts
                p.waitFor(30, TimeUnit.SECONDS);
            }
            assertThat(mine).as("round %d acknowledged batches", round).isNotEmpty();
            acked.addAll(mine);
        }
        LogLocation loc = new LogLocation(root, "pipe", experiment);
        try (CheckpointLog log = CheckpointLog.open(loc)) {
            log.openWriter("crasher", WriterOptions.mergingEvery(2)).close(); // the restarted writer replays its WAL
            try (LogReader r = log.reader()) {
                Map<String, ItemState> all = r.foldAll();
                for (int n : acked) {
                    assertThat(all).as("acknowledged batch %d", n).containsKey("crash-" + n);
                }
                assertThat(all.values()).allSatisfy(s -> {
                    assertThat(s.eventCount())
                            .as("events of %s", s.item().itemId())
                            .isEqualTo(5);
                    assertThat(s.fields()).hasSize(3);
                    assertThat(s.completedSteps()).hasSize(1);
                });
                assertThat(r.allEvents()).hasSize(all.size() * 5);
            }
        }
    }
}
