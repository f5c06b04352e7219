package dev.vigilo.sessionlog;

/**
 * Base of the session-log exception hierarchy. Subclasses: {@link CorruptSessionLogException} (the bytes are
 * not a readable log; carries the offset), {@link UnsupportedSessionFormatException} (a newer or unknown
 * format), {@link FencedWriterException} (the writer lost its epoch), {@link SessionLogIOException} (an I/O
 * failure; durability state unknown).
 */
public abstract class SessionLogException extends RuntimeException {
    protected SessionLogException(String message, Throwable cause) {
        super(message, cause);
    }
}
