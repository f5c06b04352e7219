package dev.vigilo.sessionlog;

import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.UnavailableException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Supplies writer epochs (fencing tokens). A writer acquires a {@link WriterLease} before appending and checks
 * it before every batch. The local implementation is {@link LockFileEpochSource}; a distributed coordinator
 * (the runs pillar's chunk-lease generation) can implement this interface or use {@link #fixed(Epoch)}.
 * Implementations must be thread-safe.
 */
public interface EpochSource {
    /**
     * Acquires the right to append to {@code log} under an epoch >= {@code atLeast}.
     *
     * @throws FencedException when another writer holds the log or the epoch would be below {@code atLeast}
     * @throws UnavailableException on I/O failure
     */
    WriterLease acquire(Path log, Epoch atLeast);

    /**
     * An epoch supplied by an external lease coordinator: no local lock; {@link WriterLease#checkCurrent()}
     * always passes (the coordinator fences by generation, and readers fence by epoch).
     */
    static EpochSource fixed(Epoch epoch) {
        Objects.requireNonNull(epoch, "epoch");
        return (log, atLeast) -> {
            if (epoch.compareTo(atLeast) < 0) {
                throw new FencedException("epoch " + epoch.value() + " is fenced: " + log
                        + " already holds batches of epoch " + (atLeast.value() - 1));
            }
            return new WriterLease() {
                @Override
                public Epoch epoch() {
                    return epoch;
                }

                @Override
                public void checkCurrent() {}

                @Override
                public void close() {}
            };
        };
    }
}
