package dev.vigilo.exec;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.exec.view.RunComparison;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StorageConfig;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.UUID;

/**
 * A child process for {@link RunCompareLargeIT}: {@code CONTROL_URL STORE_ROOT RUN_A RUN_B} compares the two runs
 * (flips counted, not kept) and prints one line {@code RESULT same=.. compared=.. flipped=.. only_a=.. only_b=..
 * ms=.. peak_heap_mib=..}. The peak is the sum of the heap pools' peaks since the comparison began (an upper bound of
 * the heap in use at once). Run with a small {@code -Xmx} to show that memory is bounded.
 */
public final class CompareMain {
    private CompareMain() {}

    public static void main(String[] args) throws Exception {
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(args[0]));
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            StorageConfig storage = StorageConfig.localDefault(Path.of(args[1]));
            System.gc();
            for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
                p.resetPeakUsage();
            }
            long[] flips = {0};
            boolean[] same = {false};
            long t0 = System.nanoTime();
            RunComparison.Summary s = new RunComparison(placements, storage)
                    .compare(UUID.fromString(args[2]), UUID.fromString(args[3]), new RunComparison.Listener() {
                        @Override
                        public void start(RunComparison.Header h) {
                            same[0] = h.sameDataset();
                        }

                        @Override
                        public void flip(RunComparison.Flip f) {
                            flips[0]++;
                        }
                    });
            long ms = (System.nanoTime() - t0) / 1_000_000;
            long peak = 0;
            for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
                if (p.getType() == MemoryType.HEAP) {
                    peak += p.getPeakUsage().getUsed();
                }
            }
            // Baseline: read and hash the same receipt files straight from the local store's directory.
            long r0 = System.nanoTime();
            for (String run : new String[] {args[2], args[3]}) {
                Path receipts = Path.of(args[1], "runs", run, "receipts");
                try (var files = Files.list(receipts)) {
                    for (Path f : (Iterable<Path>) files::iterator) {
                        Sha256.of(Files.readAllBytes(f));
                    }
                }
            }
            long rawMs = (System.nanoTime() - r0) / 1_000_000;
            System.out.printf(
                    Locale.ROOT,
                    "RESULT same=%s compared=%d flipped=%d listened=%d only_a=%d only_b=%d ms=%d peak_heap_mib=%.1f"
                            + " raw_ms=%d%n",
                    same[0],
                    s.compared(),
                    s.flipped(),
                    flips[0],
                    s.onlyInA(),
                    s.onlyInB(),
                    ms,
                    peak / 1048576.0,
                    rawMs);
        }
        System.exit(0);
    }
}
