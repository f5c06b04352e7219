package dev.vigilo.checkpoint;

import java.time.Duration;
import java.util.Objects;

/**
 * Writer tuning.
 *
 * @param mergeEveryFlushes merge this writer's flushed generations into the base table after this
 *     many memtable flushes (0 = only when {@link LogWriter#mergeOwnGenerations()} is called)
 * @param putTimeout how long one durable put may take before the writer gives up on it (outcome
 *     unknown)
 */
public record WriterOptions(int mergeEveryFlushes, Duration putTimeout) {
    /**
     * Checkpoint batches per MemWAL memtable: the writer flushes its memtable to a new generation
     * (visible to other processes' readers) after this many batches, on {@link LogWriter#flush()}
     * and on close. Every batch is durable in the WAL when {@link LogWriter#write} returns,
     * whatever this value. The writer flushes by closing and reopening its ShardWriter: with
     * Lance's own automatic flush (maxMemtableBatches), the batch put right after a flush was lost
     * on WAL replay after kill -9 (Lance 7.0.0, reproduced by CrashRecoveryTest).
     */
    public static final int MEMTABLE_BATCHES = 8;

    /** Merge every 4 flushes, 60 s put timeout. */
    public static final WriterOptions DEFAULTS = new WriterOptions(4, Duration.ofSeconds(60));

    public WriterOptions {
        Objects.requireNonNull(putTimeout, "putTimeout");
        if (putTimeout.isNegative() || putTimeout.isZero())
            throw new IllegalArgumentException("putTimeout must be > 0");
        if (mergeEveryFlushes < 0) throw new IllegalArgumentException("mergeEveryFlushes must be >= 0");
    }

    /** With the default put timeout. */
    public static WriterOptions mergingEvery(int flushes) {
        return new WriterOptions(flushes, DEFAULTS.putTimeout());
    }
}
