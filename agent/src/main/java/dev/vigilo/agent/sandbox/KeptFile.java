package dev.vigilo.agent.sandbox;

import java.util.Objects;

/**
 * A file of a sandbox's work directory that matched {@code keep_files}, read after the attempt.
 *
 * @param path  its path relative to the work directory, with {@code /} separators
 * @param bytes its content (the caller stores it; the total of an attempt is at most
 *              {@link SandboxSettings#MAX_KEPT_BYTES})
 */
public record KeptFile(String path, byte[] bytes) {
    public KeptFile {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(bytes, "bytes");
    }
}
