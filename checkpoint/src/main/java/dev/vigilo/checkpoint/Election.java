package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.FencedException;

/** A held maintenance role: an OS file lock (local roots) or an S3 lease ({@link S3Lease}). */
interface Election {
    /**
     * Confirms (and for a lease, renews) the role before a maintenance step; {@link
     * FencedException} if lost.
     */
    void confirm();

    /** Gives the role up so that another worker can take it at once. */
    void release();
}
