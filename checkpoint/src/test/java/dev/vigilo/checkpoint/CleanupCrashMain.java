package dev.vigilo.checkpoint;

import java.nio.file.Path;

/**
 * Test helper process: elects maintenance and runs one pass with a zero grace for merged
 * generations, printing "REMOVED path" per removed file; after the third it prints "PAUSE" and
 * stops inside the cleanup until the test kills it with kill -9. Args: durableRoot pipeline
 * experiment
 */
public final class CleanupCrashMain {
    public static void main(String[] args) throws Exception {
        try (CheckpointLog log = CheckpointLog.open(new LogLocation(Path.of(args[0]), args[1], args[2]));
                Maintenance m = log.tryElectMaintenance().orElseThrow()) {
            int[] n = {0};
            m.onFileRemoved(p -> {
                System.out.println("REMOVED " + p);
                if (++n[0] == 3) {
                    System.out.println("PAUSE");
                    System.out.flush();
                    try {
                        Thread.sleep(120_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            m.runOnce(3_600_000, 0);
            System.out.println("DONE");
        }
    }
}
