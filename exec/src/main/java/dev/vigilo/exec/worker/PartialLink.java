package dev.vigilo.exec.worker;

import dev.vigilo.exec.record.ChunkTables;

/**
 * Where a held chunk's newest partial receipt is referenced: in a worker, the fenced update of the chunk's row
 * ({@link ChunkTables#referencePartial}) in a short transaction of its own (docs/execution.md, "Resume from partial
 * receipts").
 */
interface PartialLink {
    /** No partial receipts: an executor given it writes none (executions outside a worker's leases). */
    PartialLink NONE = partial -> false;

    /**
     * References {@code partial} from the chunk's row.
     *
     * @return false when the lease is no longer the caller's (nothing was written; no further partial should be)
     */
    boolean reference(ChunkTables.Partial partial);
}
