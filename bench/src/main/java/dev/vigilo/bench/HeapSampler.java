package dev.vigilo.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Samples, every 20 ms, the heap in use after the most recent GC of every heap pool, and keeps the largest sum: the
 * live heap a workload needs, independent of how lazily the collector runs. A daemon thread; {@link #stopAndJoin}
 * ends it.
 */
final class HeapSampler extends Thread {
    private final AtomicLong peak = new AtomicLong();
    private volatile boolean stop;

    HeapSampler() {
        super("heap-sampler");
        setDaemon(true);
    }

    @Override
    public void run() {
        List<MemoryPoolMXBean> pools = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP && p.isCollectionUsageThresholdSupported())
                .toList();
        while (!stop) {
            long used = 0;
            for (MemoryPoolMXBean p : pools) {
                MemoryUsage u = p.getCollectionUsage();
                used += u == null ? 0 : u.getUsed();
            }
            peak.accumulateAndGet(used, Math::max);
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** The largest heap in use after a GC seen so far, in bytes. */
    long peakBytes() {
        return peak.get();
    }

    void stopAndJoin() throws InterruptedException {
        stop = true;
        join();
    }
}
