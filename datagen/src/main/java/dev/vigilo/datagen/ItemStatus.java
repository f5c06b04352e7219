package dev.vigilo.datagen;

/** Where one item stands. */
public enum ItemStatus {
    /** Not terminal, steps remain to be run (or are running). */
    RUNNING,
    /** TERMINAL completed. */
    COMPLETED,
    /** TERMINAL filtered. */
    FILTERED,
    /** A step exhausted its attempts; the item is not retried by later runs. */
    FAILED
}
