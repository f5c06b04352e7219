package dev.vigilo.exec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Removal of the flat temporary directories the readers of runs stage files in. */
public final class ScratchDirs {
    private ScratchDirs() {}

    /** Deletes {@code dir} and the files in it, quietly: a leftover temporary file harms nothing. */
    public static void delete(Path dir) {
        if (dir == null) {
            return;
        }
        try (var files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Files.deleteIfExists(p);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // nothing to do: the temporary directory is the operating system's to clean
        }
    }
}
