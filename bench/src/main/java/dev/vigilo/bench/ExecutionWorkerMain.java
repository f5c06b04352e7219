package dev.vigilo.bench;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.Worker;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Path;
import java.util.UUID;

/**
 * A worker process of {@link ExecutionBenchmark}: what {@code vigilo worker --exit-when-idle --concurrency N} does
 * (joins the embedded control database, opens the default placement, runs {@link Worker} with its production
 * options), plus timing lines on standard output for the benchmark to read:
 *
 * <pre>
 * bench-worker main EPOCH_MS            entered main (JVM started)
 * bench-worker ready EPOCH_MS           control database joined, placements open; the worker starts
 * bench-worker chunk EPOCH_MS CASES     a chunk was completed (its receipt recorded under the lease)
 * bench-worker exit PEAK_HEAP_BYTES REPORT
 * </pre>
 *
 * Arguments: {@code POSTGRES_DIR STORE_ROOT CONCURRENCY}. The peak is the largest heap in use after a GC while the
 * worker ran ({@link HeapSampler}).
 */
public final class ExecutionWorkerMain {
    private ExecutionWorkerMain() {}

    public static void main(String[] args) throws Exception {
        System.out.println("bench-worker main " + System.currentTimeMillis());
        Path postgres = Path.of(args[0]);
        StorageConfig storage = StorageConfig.localDefault(Path.of(args[1]));
        int concurrency = Integer.parseInt(args[2]);
        HeapSampler heap = new HeapSampler();
        heap.start();
        Worker.Report report;
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Embedded(postgres));
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            Worker.Listener listener = new Worker.Listener() {
                @Override
                public void chunkCompleted(UUID runId, long chunkIndex, int cases) {
                    System.out.println("bench-worker chunk " + System.currentTimeMillis() + " " + cases);
                }
            };
            System.out.println("bench-worker ready " + System.currentTimeMillis());
            report = new Worker(placements, storage, Worker.Options.defaults(concurrency, true), listener).run();
        }
        heap.stopAndJoin();
        System.out.println("bench-worker exit " + heap.peakBytes() + " " + report);
        System.exit(0);
    }
}
