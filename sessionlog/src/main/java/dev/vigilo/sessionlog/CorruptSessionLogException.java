package dev.vigilo.sessionlog;

/**
 * The file is not a readable session log (damaged frame, bad header, seq conflict in the committed region...).
 * {@link #offset()} names where: a byte offset in the file, or -1 when no single offset applies.
 */
public final class CorruptSessionLogException extends SessionLogException {
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
