package dev.vigilo.sessionlog;

import java.nio.file.Path;

/**
 * Child-process entry for the streaming test: verifies FILE and prints the report JSON, the max heap, and the
 * peak heap used (the sum of every heap pool's peak: an upper bound of the true peak).
 */
public final class LargeVerifyMain {
    public static void main(String[] args) {
        VerifyReport r = SessionVerifier.verify(Path.of(args[0]));
        System.out.println(r.toJson());
        System.out.println("maxHeap=" + Runtime.getRuntime().maxMemory());
        long peak = 0;
        for (var pool : java.lang.management.ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == java.lang.management.MemoryType.HEAP) {
                peak += pool.getPeakUsage().getUsed();
            }
        }
        System.out.println("peakHeap=" + peak);
        System.exit(r.accepted() ? 0 : 1);
    }
}
