package dev.vigilo.sessionlog;

import dev.vigilo.common.errors.FencedException;

/** The right to append under one {@link Epoch}. Closing releases it; closing twice is safe. */
public interface WriterLease extends AutoCloseable {
    /** @return the epoch this lease grants */
    Epoch epoch();

    /** @throws FencedException when the lease was lost (another writer may hold a higher epoch) */
    void checkCurrent();

    @Override
    void close();
}
