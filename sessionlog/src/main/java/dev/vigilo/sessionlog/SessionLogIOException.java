package dev.vigilo.sessionlog;

import java.io.IOException;

/**
 * An I/O failure while reading or writing a session log. For appends the durability of the batch is unknown:
 * re-open the log (which re-derives the high watermark) before deciding whether to retry.
 */
public final class SessionLogIOException extends SessionLogException {
    public SessionLogIOException(String message, IOException cause) {
        super(message + ": " + cause.getMessage(), cause);
    }
}
