package dev.vigilo.checkpoint;

import java.nio.file.Path;

/**
 * Test helper process: writes batches of 5 events (item "crash-N": ITEM_CREATED, 3 FIELD_SETs,
 * STEP_COMPLETED) forever, printing "ACK N" after each durable write returns. The test kills it
 * with kill -9. Args: durableRoot pipeline experiment writerName startIndex
 */
public final class CrashWriterMain {
    public static void main(String[] args) {
        LogLocation loc = new LogLocation(Path.of(args[0]), args[1], args[2]);
        int start = Integer.parseInt(args[4]);
        try (CheckpointLog log = CheckpointLog.openOrCreate(loc);
                LogWriter w = log.openWriter(args[3], WriterOptions.mergingEvery(2))) {
            System.out.println("READY " + w.epoch());
            System.out.flush();
            for (int n = start; ; n++) {
                w.write(TestBatches.itemWithStep(w.epoch(), "crash-" + n, 3));
                System.out.println("ACK " + n);
                System.out.flush();
            }
        }
    }
}
