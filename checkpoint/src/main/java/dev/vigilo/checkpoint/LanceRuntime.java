package dev.vigilo.checkpoint;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.stream.Stream;

/**
 * Lance extracts its ~180 MB native library into java.io.tmpdir on every JVM start and deletes it
 * on normal exit only; kill -9 leaks the copy. Before first use we sweep copies older than an hour
 * (a younger one may belong to a JVM that is starting right now).
 */
final class LanceRuntime {
    private LanceRuntime() {}

    private static final Duration STALE = Duration.ofHours(1);

    static void prepare() {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try {
            Files.createDirectories(tmp);
        } catch (IOException e) {
            return; // Lance will report the real problem when it tries to extract.
        }
        Instant cutoff = Instant.now().minus(STALE);
        try (Stream<Path> s = Files.list(tmp)) {
            s.filter(p -> p.getFileName().toString().contains("lance_jni")).forEach(p -> {
                try {
                    if (Files.getLastModifiedTime(p).toInstant().isBefore(cutoff)) Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // Best effort: a copy we cannot delete only costs disk space.
                }
            });
        } catch (IOException ignored) {
            // Best effort, as above.
        }
    }
}
