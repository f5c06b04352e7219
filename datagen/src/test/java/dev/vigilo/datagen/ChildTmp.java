package dev.vigilo.datagen;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A java.io.tmpdir for a child JVM inside a test's temporary directory: Lance extracts its ~180 MB
 * native library there and a kill -9 leaks it, so the copy must go away with the test's directory,
 * not pile up under target/.
 */
final class ChildTmp {
    private ChildTmp() {}

    static String of(Path testDir) {
        try {
            return Files.createDirectories(testDir.resolve("jvm-tmp")).toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
