package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.crash.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cleanup of merged MemWAL generations, their WAL entries and old shard manifests on a real local
 * log: the grace period keeps an open reader's generations, afterwards they go, every event is
 * still read exactly once, a killed and restarted writer replays correctly, and a kill -9 in the
 * middle of cleanup leaves a readable log.
 */
class GenerationCleanupTest {
    @TempDir
    Path root;

    @Test
    void mergedGenerationsGoAfterTheGracePeriodAndTheLogStaysExact() throws Exception {
        LogLocation loc = new LogLocation(root, "pipe", "clean");
        ShardId cw = ShardId.forWriter("pipe", "clean", "cw");
        ShardId other = ShardId.forWriter("pipe", "clean", "other");
        try (CheckpointLog log = CheckpointLog.openOrCreate(loc)) {
            LogReader early;
            try (LogWriter w = log.openWriter("cw", WriterOptions.mergingEvery(0))) {
                for (int i = 0; i < 16; i++) {
                    w.write(TestBatches.itemWithStep(w.epoch(), "c-" + i, 2));
                    if (i % 8 == 7) {
                        w.flush(); // two generations
                    }
                }
                early = log.reader(); // sees the two generations unmerged
                assertThat(early.unmergedGenerations()).isEqualTo(2);
                assertThat(w.mergeOwnGenerations()).isEqualTo(2);
                for (int i = 16; i < 32; i++) {
                    w.write(TestBatches.itemWithStep(w.epoch(), "c-" + i, 2));
                    if (i % 8 == 7) {
                        w.flush();
                    }
                }
                assertThat(w.mergeOwnGenerations()).isEqualTo(2);
            }
            try (LogWriter o = log.openWriter("other", WriterOptions.mergingEvery(0))) {
                for (int i = 0; i < 8; i++) {
                    o.write(TestBatches.itemWithStep(o.epoch(), "o-" + i, 2)); // never merged
                }
            }
            int walBefore = log.files().list("_mem_wal/" + cw + "/wal").size();
            assertThat(genFolders(loc, cw)).hasSizeGreaterThanOrEqualTo(4);
            List<String> otherGens = genFolders(loc, other);
            assertThat(otherGens).isNotEmpty();

            try (Maintenance m = log.tryElectMaintenance().orElseThrow()) {
                // Within the grace period nothing merged goes: the early reader's snapshot stays
                // readable.
                Maintenance.Report kept = m.runOnce(3_600_000, 3_600_000);
                assertThat(kept.generationFoldersRemoved()).isZero();
                assertThat(kept.walFilesRemoved()).isZero();
                assertThat(early.allEvents()).hasSize(16 * 4);
                early.close();

                Maintenance.Report rep = m.runOnce(3_600_000, 0);
                assertThat(rep.generationFoldersRemoved()).isGreaterThanOrEqualTo(4);
                assertThat(rep.walFilesRemoved()).isGreaterThan(0);
                assertThat(rep.manifestsRemoved()).isGreaterThan(0);
            }
            long watermark;
            try (org.lance.Dataset ds = log.openDataset()) {
                watermark = MemWalFiles.mergedGenerations(ds).get(cw);
            }
            assertThat(genFolders(loc, cw))
                    .allSatisfy(
                            f -> assertThat(MemWalFiles.generationOfFolder(f)).isGreaterThan(watermark));
            assertThat(genFolders(loc, other)).containsExactlyElementsOf(otherGens); // not merged: untouched
            assertThat(log.files().list("_mem_wal/" + cw + "/wal"))
                    .hasSizeLessThan(walBefore)
                    .isNotEmpty();
            assertExactlyOnce(log, 40 * 4);
        }

        // A writer killed with kill -9 after the cleanup: its restart replays the WAL; nothing
        // acknowledged is lost.
        Set<Integer> acked = killWriterAfter(loc, "cw", 11);
        try (CheckpointLog log = CheckpointLog.open(loc)) {
            log.openWriter("cw", WriterOptions.mergingEvery(1)).close();
            try (LogReader r = log.reader()) {
                Map<String, ItemState> all = r.foldAll();
                for (int n : acked) {
                    assertThat(all).as("acknowledged batch %d", n).containsKey("crash-" + n);
                }
                long crashItems = all.keySet().stream()
                        .filter(k -> k.startsWith("crash-"))
                        .count();
                assertThat(r.allEvents()).hasSize((int) (40 * 4 + crashItems * 5));
                try (Maintenance m = log.tryElectMaintenance().orElseThrow()) {
                    assertThat(m.runOnce(3_600_000, 0).generationFoldersRemoved())
                            .isGreaterThan(0);
                }
                assertExactlyOnce(log, (int) (40 * 4 + crashItems * 5));
            }
        }
    }

    @Test
    void killDuringCleanupLeavesAReadableLogAndTheNextPassFinishes() throws Exception {
        LogLocation loc = new LogLocation(root, "pipe", "cleancrash");
        ShardId shard = ShardId.forWriter("pipe", "cleancrash", "w");
        try (CheckpointLog log = CheckpointLog.openOrCreate(loc);
                LogWriter w = log.openWriter("w", WriterOptions.mergingEvery(1))) {
            for (int i = 0; i < 32; i++) {
                w.write(TestBatches.itemWithStep(w.epoch(), "k-" + i, 2)); // 4 merged generations
            }
        }
        List<String> gensBefore = genFolders(loc, shard);
        Process p = child(CleanupCrashMain.class, loc.root().uri(), "pipe", "cleancrash");
        List<String> removed = new ArrayList<>();
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null && !line.equals("PAUSE")) {
                if (line.startsWith("REMOVED ")) {
                    removed.add(line.substring(8));
                }
            }
            assertThat(line).isEqualTo("PAUSE");
        } finally {
            p.destroyForcibly(); // SIGKILL inside the cleanup
            p.waitFor(30, TimeUnit.SECONDS);
        }
        assertThat(removed).hasSize(3).allSatisfy(f -> assertThat(f).contains("_gen_"));
        assertThat(genFolders(loc, shard)).hasSize(gensBefore.size()); // the first folder is only partly deleted
        try (CheckpointLog log = CheckpointLog.open(loc)) {
            assertExactlyOnce(log, 32 * 4);
            try (LogWriter w = log.openWriter("w", WriterOptions.mergingEvery(1))) {
                w.write(TestBatches.itemWithStep(w.epoch(), "k-after", 2));
            }
            try (Maintenance m = log.tryElectMaintenance().orElseThrow()) { // the killed holder's lock went with it
                assertThat(m.runOnce(3_600_000, 0).generationFoldersRemoved())
                        .isGreaterThanOrEqualTo(gensBefore.size());
            }
            assertExactlyOnce(log, 33 * 4);
        }
    }

    private static void assertExactlyOnce(CheckpointLog log, int events) {
        try (LogReader r = log.reader()) {
            List<CheckpointEvent> all = r.allEvents();
            assertThat(all).hasSize(events);
            assertThat(all.stream().map(e -> e.eventId().value()).distinct().count())
                    .isEqualTo(events);
            assertThat(r.foldAll().values())
                    .allSatisfy(s -> assertThat(s.completedSteps()).hasSize(1));
        }
    }

    private static List<String> genFolders(LogLocation loc, ShardId shard) throws Exception {
        try (Stream<Path> s = Files.list(loc.logDir().resolve("_mem_wal").resolve(shard.toString()))) {
            return s.map(p -> p.getFileName().toString())
                    .filter(n -> MemWalFiles.generationOfFolder(n) > 0)
                    .sorted()
                    .toList();
        }
    }

    private Set<Integer> killWriterAfter(LogLocation loc, String writer, int acks) throws Exception {
        Process p = child(CrashWriterMain.class, loc.root().uri(), loc.pipeline(), loc.experiment(), writer, "0");
        Set<Integer> acked = new HashSet<>();
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while (acked.size() < acks && (line = out.readLine()) != null) {
                if (line.startsWith("ACK ")) {
                    acked.add(Integer.parseInt(line.substring(4)));
                }
            }
        } finally {
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
        }
        assertThat(acked).hasSize(acks);
        return acked;
    }

    private Process child(Class<?> main, String... args) throws Exception {
        return new ProcessBuilder(ChildJvm.command(root, main.getName(), args))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
    }
}
