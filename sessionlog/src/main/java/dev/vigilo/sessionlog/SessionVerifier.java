package dev.vigilo.sessionlog;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * {@code vigilo session verify}: reads a session log (streaming, O(frames) memory) and returns its verdict.
 * Without protocol metadata the verdict, counts and recovered events equal the published reader's.
 * Thread-safe (stateless).
 */
public final class SessionVerifier {
    private SessionVerifier() {}

    /**
     * @param log the {@code session.jsonl.zstd} file; its sidecar manifest {@code <log>.meta} is read if present
     * @return the verdict; a damaged or unsupported log is a REJECT report, never an exception
     * @throws SessionLogIOException when the file cannot be read (missing, permissions)
     */
    public static VerifyReport verify(Path log) {
        Objects.requireNonNull(log, "log");
        if (!Files.isRegularFile(log))
            throw new SessionLogIOException(
                    "cannot verify " + log, new java.io.FileNotFoundException(log + " is not a regular file"));
        return LogReader.read(log, null).report();
    }
}
