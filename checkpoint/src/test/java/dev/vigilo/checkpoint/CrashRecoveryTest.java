package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

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
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 a real writer process mid-stream, repeatedly: every acknowledged batch survives, every
 * batch is all-or-none.
 */
class CrashRecoveryTest {
    @TempDir
    Path root;

    @Test
    void killedWriterLosesNoAcknowledgedBatchAndNeverLeavesHalfABatch() throws Exception {
        killRepeatedly("crash", 1, new int[] {5, 9, 17});
    }

    /** Eight threads sharing group-committed puts: a kill lands between, inside and after shared puts. */
    @Test
    void killedGroupCommittingWriterLosesNoAcknowledgedBatchAndNeverLeavesHalfABatch() throws Exception {
        killRepeatedly("group", 8, new int[] {3, 20, 41, 64});
    }

    private void killRepeatedly(String experiment, int threads, int[] targets) throws Exception {
        Set<Integer> acked = new HashSet<>();
        for (int round = 0; round < targets.length; round++) {
            Process p = new ProcessBuilder(List.of(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "--add-opens=java.base/java.nio=ALL-UNNAMED",
                            "-Djava.io.tmpdir=" + ChildTmp.of(root),
                            "-cp",
                            System.getProperty("java.class.path"),
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
                // With one thread, 9 and 17 leave one batch in the WAL tail.
                int target = targets[round];
                while ((line = out.readLine()) != null) {
                    if (line.startsWith("ACK ")) {
                        mine.add(Integer.parseInt(line.substring(4)));
                        if (mine.size() >= target) break;
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
