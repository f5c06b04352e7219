package dev.vigilo.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.stream.Stream;

/**
 * Counts the durable MemWAL puts an experiment's checkpoint log received: every put writes one WAL entry file
 * ({@code _mem_wal/<shard>/wal/<entry>} inside the log's Lance dataset), and nothing removes them during a run.
 */
final class WalEntries {
    private WalEntries() {}

    /** WAL entry files under {@code logRoot} whose path names experiment {@code experiment}. */
    static long count(Path logRoot, String experiment) throws IOException {
        PathMatcher walEntry = logRoot.getFileSystem().getPathMatcher("glob:**/" + experiment + "/**/_mem_wal/*/wal/*");
        try (Stream<Path> files = Files.walk(logRoot)) {
            return files.filter(p -> walEntry.matches(p) && Files.isRegularFile(p))
                    .count();
        }
    }
}
