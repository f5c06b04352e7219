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
 * @param groupBatches group commit: at most this many batches, written concurrently by several threads and waiting at
 *     the same moment, share one durable put (1 = one put per batch). Each batch stays all-or-nothing (the shared
 *     put is), and every caller returns only after the put holding its batch is durable.
 */
public record WriterOptions(int mergeEveryFlushes, Duration putTimeout, int groupBatches) {
    /** Default {@link #groupBatches}. */
    public static final int GROUP_BATCHES = 64;

    /**
     * Events per shared put at most (a group stops growing at this many events; a single larger batch is still one
     * put): keeps one put's Arrow batch and memtable share bounded.
     */
    public static final int GROUP_EVENTS = 65_536;

    /**
     * Group commit: how long a new leader waits at most for as many batches as the previous put held before it puts
     * what has arrived (a put takes 2-5 ms; writers released by the same put return within a millisecond or so).
     */
    public static final Duration GROUP_GATHER = Duration.ofMillis(1);

    /**
     * When the writer flushes its MemWAL memtable to a new generation (visible to other processes'
     * readers): after a put, once {@link #FLUSH_INTERVAL} has passed since the last flush or the
     * memtable holds {@link #MEMTABLE_BATCHES} puts; also on {@link LogWriter#flush()} and on close.
     * Every batch is durable in the WAL when {@link LogWriter#write} returns, whatever these values:
     * they trade other processes' read latency (and the WAL replayed after a crash) against the cost
     * of a flush, which is several puts' worth. The writer flushes by closing and reopening its
     * ShardWriter: with Lance's own automatic flush (maxMemtableBatches), the batch put right after a
     * flush was lost on WAL replay after kill -9 (Lance 7.0.0, reproduced by CrashRecoveryTest).
     */
    public static final int MEMTABLE_BATCHES = 1_024;

    /** See {@link #MEMTABLE_BATCHES}. */
    public static final Duration FLUSH_INTERVAL = Duration.ofSeconds(2);

    /** Merge every 4 flushes, 60 s put timeout, group commit of up to {@link #GROUP_BATCHES} batches. */
    public static final WriterOptions DEFAULTS = new WriterOptions(4, Duration.ofSeconds(60), GROUP_BATCHES);

    public WriterOptions {
        Objects.requireNonNull(putTimeout, "putTimeout");
        if (putTimeout.isNegative() || putTimeout.isZero()) {
            throw new IllegalArgumentException("putTimeout must be > 0");
        }
        if (mergeEveryFlushes < 0) {
            throw new IllegalArgumentException("mergeEveryFlushes must be >= 0");
        }
        if (groupBatches < 1) {
            throw new IllegalArgumentException("groupBatches must be >= 1");
        }
    }

    /** With the default group commit. */
    public WriterOptions(int mergeEveryFlushes, Duration putTimeout) {
        this(mergeEveryFlushes, putTimeout, GROUP_BATCHES);
    }

    /** These options with group commit of up to {@code batches} batches per put (1 = off). */
    public WriterOptions withGroupBatches(int batches) {
        return new WriterOptions(mergeEveryFlushes, putTimeout, batches);
    }

    /** With the default put timeout. */
    public static WriterOptions mergingEvery(int flushes) {
        return new WriterOptions(flushes, DEFAULTS.putTimeout());
    }
}
