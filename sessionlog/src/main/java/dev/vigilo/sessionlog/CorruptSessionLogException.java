package dev.vigilo.sessionlog;

import dev.vigilo.common.errors.DamagedException;

/**
 * The file is not a readable session log (damaged frame, bad header, seq conflict in the committed region...).
 * {@link #offset()} names where: a byte offset in the file, or -1 when no single offset applies.
 */
public final class CorruptSessionLogException extends DamagedException {
    private static final long serialVersionUID = 1L;

    private final long offset;

    public CorruptSessionLogException(String message, long offset) {
        this(message, offset, null);
    }

    public CorruptSessionLogException(String message, long offset, Throwable cause) {
        super(message, cause);
        this.offset = offset;
    }

    /** @return byte offset in the file where the damage was detected, or -1 */
    public long offset() {
        return offset;
    }
}
