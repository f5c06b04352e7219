package dev.vigilo.sessionlog;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
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
     * @throws NotFoundException when the file is missing
     * @throws InvalidInputException when it is not a readable regular file (a pipe, a device, a directory)
     * @throws UnavailableException when the file cannot be read
     */
    public static VerifyReport verify(Path log) {
        Objects.requireNonNull(log, "log");
        return LogReader.read(log, null).report();
    }
}
