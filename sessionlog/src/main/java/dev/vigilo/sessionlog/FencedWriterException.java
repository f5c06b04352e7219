package dev.vigilo.sessionlog;

/**
 * A writer tried to append under an epoch that is no longer current (another writer acquired a higher epoch).
 * Nothing was appended by the failing call. Not retryable with the same writer: open a new one.
 */
public final class FencedWriterException extends SessionLogException {
    public FencedWriterException(String message) {
        super(message, null);
    }
}
