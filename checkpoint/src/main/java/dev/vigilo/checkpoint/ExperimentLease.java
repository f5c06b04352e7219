package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.FencedException;

/**
 * A named lease of one experiment held by this process ({@link CheckpointLog#tryAcquireLease}): on a local root an
 * exclusive OS file lock (released by {@link #release()} or by the holder's death, so no renewal is needed), on S3 a
 * lease object renewed by {@link #renew()} and taken over by another process once it expired. The same mechanisms
 * elect the maintenance worker. Not thread-safe: one thread renews and releases it.
 */
public interface ExperimentLease {
    /**
     * Renews the lease (S3: extends its expiry by the lease duration; local: checks the lock is still held).
     *
     * @throws FencedException the lease was taken over (it expired without renewal) or lost
     */
    void renew();

    /** Gives the lease up so another process can take it at once; never throws. */
    void release();
}
