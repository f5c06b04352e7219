package dev.vigilo.sessionlog;

import dev.vigilo.common.errors.DamagedException;

/**
 * The log was written in a format this build does not read: a header version other than 0, or an event type
 * outside the known vocabulary that is not marked {@code ignorable}. Likely written by a newer writer.
 */
public final class UnsupportedSessionFormatException extends DamagedException {
    private static final long serialVersionUID = 1L;

    private final long offset;

    public UnsupportedSessionFormatException(String message, long offset) {
        super(message);
        this.offset = offset;
    }

    /** @return byte offset of the frame holding the refused record, or -1 */
    public long offset() {
        return offset;
    }
}
