package dev.vigilo.sessionlog;

/** The right to append under one {@link Epoch}. Closing releases it; closing twice is safe. */
public interface WriterLease extends AutoCloseable {
    /** @return the epoch this lease grants */
    Epoch epoch();

    /** @throws FencedWriterException when the lease was lost (another writer may hold a higher epoch) */
    void checkCurrent();

    @Override
    void close();
}
