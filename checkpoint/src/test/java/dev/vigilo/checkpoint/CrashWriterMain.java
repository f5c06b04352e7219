package dev.vigilo.checkpoint;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Test helper process: writes batches of 5 events (item "crash-N": ITEM_CREATED, 3 FIELD_SETs,
 * STEP_COMPLETED) forever, printing "ACK N" after each durable write returns. The test kills it
 * with kill -9. Args: durableRoot pipeline experiment writerName startIndex [threads]; with several
 * threads (group commit), thread T writes items startIndex + T * 10000 + i.
 */
public final class CrashWriterMain {
    public static void main(String[] args) throws InterruptedException {
        LogLocation loc = new LogLocation(Path.of(args[0]), args[1], args[2]);
        int start = Integer.parseInt(args[4]);
        int threads = args.length > 5 ? Integer.parseInt(args[5]) : 1;
        try (CheckpointLog log = CheckpointLog.openOrCreate(loc);
                LogWriter w = log.openWriter(args[3], WriterOptions.mergingEvery(2))) {
            System.out.println("READY " + w.epoch());
            System.out.flush();
            List<Thread> running = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = start + t * 10_000;
                Thread th = new Thread(() -> {
                    for (int n = first; ; n++) {
                        w.write(TestBatches.itemWithStep(w.epoch(), "crash-" + n, 3));
                        synchronized (System.out) {
                            System.out.println("ACK " + n);
                            System.out.flush();
                        }
                    }
                });
                th.start();
                running.add(th);
            }
            for (Thread th : running) {
                th.join();
            }
        }
    }
}
