package dev.vigilo.checkpoint;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The copies of native libraries that Lance and Arrow unpack into one temporary directory, and the rules that keep
 * them from piling up.
 *
 * <p>Lance 7.0.0 loads {@code liblance_jni} through questdb's {@code JarJniLoader} and Arrow loads
 * {@code arrow_cdata_jni} through its C-data {@code JniLoader}; both copy the library out of their jar with
 * {@code File.createTempFile} into {@code java.io.tmpdir} on every JVM start ({@code liblance_jni<n>.so}, about
 * 181 MB, and {@code jnilib-<n>.tmp}), take no path or property, and delete the copy only at a normal exit
 * ({@code deleteOnExit}). {@link #loadUnderLock} therefore coordinates through an OS lock on {@value #LOCK_FILE} in
 * that directory:
 *
 * <ol>
 *   <li>processes unpack and load under a <em>shared</em> lock, so several can start at once;
 *   <li>stale copies are removed only under the <em>exclusive</em> lock, taken without waiting before and after
 *       loading (skipped when another process is loading right now): while it is held nobody is unpacking, so a
 *       copy that no live process maps or holds open (per {@code /proc}; without {@code /proc}, any copy) was left
 *       by a dead process;
 *   <li>once loaded, a process removes its own copies (those its memory map names, on Linux): a loaded library
 *       stays mapped after its file is unlinked, so from then on a kill leaves nothing behind.
 * </ol>
 *
 * A kill during the unpacking itself leaves a partial copy, which a later process removes. Everything here is best
 * effort: a copy that cannot be removed costs disk space, never correctness.
 */
final class NativeLibraryCopies {
    static final String LOCK_FILE = ".vigilo-native.lock";

    // File.createTempFile names: prefix + unsigned random long + suffix.
    private static final Pattern COPY = Pattern.compile("liblance_jni\\d+\\.(so|dylib)|jnilib-\\d+\\.tmp");
    private static final Path PROC = Path.of("/proc");
    private static final String DELETED = " (deleted)";

    private final Path directory;

    NativeLibraryCopies(Path directory) {
        this.directory = directory.toAbsolutePath().normalize();
    }

    /** Whether {@code fileName} is a name the loaders give their copies. */
    static boolean isCopy(String fileName) {
        return COPY.matcher(fileName).matches();
    }

    /**
     * Runs {@code load} (which unpacks and loads libraries into this directory) under the directory's shared lock,
     * removes this process's copies after it, and removes stale copies before and after it when no other process is
     * loading. Without a usable lock (the directory cannot be created or locked) it just runs {@code load}, whose own
     * errors then say what is wrong.
     */
    void loadUnderLock(Runnable load) {
        FileChannel channel;
        try {
            Files.createDirectories(directory);
            channel = FileChannel.open(
                    directory.resolve(LOCK_FILE),
                    StandardOpenOption.CREATE,
                    StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
        } catch (IOException | RuntimeException e) {
            load.run();
            return;
        }
        try (channel) {
            removeStaleIfIdle(channel);
            FileLock shared;
            try {
                shared = channel.lock(0, Long.MAX_VALUE, true);
            } catch (IOException e) {
                load.run();
                return;
            }
            try (shared) {
                load.run();
                removeOwn();
            }
            removeStaleIfIdle(channel);
        } catch (IOException e) {
            // Closing the lock or the channel failed: the OS releases both when the process ends.
        }
    }

    /** Removes the stale copies if the exclusive lock is free right now (nobody loading); otherwise does nothing. */
    private void removeStaleIfIdle(FileChannel channel) {
        try (FileLock exclusive = channel.tryLock()) {
            if (exclusive != null) {
                removeStale();
            }
        } catch (IOException | RuntimeException e) {
            // Not now: a later process removes them.
        }
    }

    /** Removes the copies this process maps (Linux); elsewhere they stay until exit or a later sweep. */
    void removeOwn() {
        Path maps = PROC.resolve("self").resolve("maps");
        if (!Files.isRegularFile(maps)) {
            return;
        }
        Path real;
        try {
            real = directory.toRealPath();
        } catch (IOException e) {
            return;
        }
        Set<Path> own = new HashSet<>();
        try (Stream<String> lines = Files.lines(maps)) {
            lines.forEach(line -> {
                int slash = line.indexOf('/');
                if (slash < 0) {
                    return;
                }
                Path file = Path.of(stripDeleted(line.substring(slash)));
                if (real.equals(file.getParent()) && isCopy(file.getFileName().toString())) {
                    own.add(file);
                }
            });
        } catch (IOException | RuntimeException e) {
            return;
        }
        own.forEach(NativeLibraryCopies::delete);
    }

    /** Removes every copy no live process maps or holds open. Call only while holding the exclusive lock. */
    void removeStale() {
        List<Path> candidates = copies();
        if (candidates.isEmpty()) {
            return;
        }
        Set<String> inUse;
        if (Files.isDirectory(PROC)) {
            Optional<Set<String>> listed = pathsInUse();
            if (listed.isEmpty()) {
                return; // cannot tell what is in use: keep everything
            }
            inUse = listed.get();
        } else {
            inUse = Set.of(); // no /proc (macOS): under the lock nobody unpacks, and unlinking a mapped file is safe
        }
        for (Path copy : candidates) {
            if (!inUse.contains(copy.toString())) {
                delete(copy);
            }
        }
    }

    /** The copies now in the directory, as real paths (what /proc shows). */
    List<Path> copies() {
        List<Path> found = new ArrayList<>();
        Path real;
        try {
            real = directory.toRealPath();
        } catch (IOException e) {
            return found;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(real)) {
            for (Path entry : entries) {
                if (isCopy(entry.getFileName().toString()) && Files.isRegularFile(entry)) {
                    found.add(entry);
                }
            }
        } catch (IOException e) {
            // Unreadable directory: nothing we could remove anyway.
        }
        return found;
    }

    /** Files that the processes we may inspect map or hold open, as /proc names them. */
    private static Optional<Set<String>> pathsInUse() {
        Set<String> paths = new HashSet<>();
        try (Stream<Path> processes = Files.list(PROC)) {
            processes
                    .filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit))
                    .forEach(p -> collect(p, paths));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        return Optional.of(paths);
    }

    private static void collect(Path process, Set<String> paths) {
        try (Stream<String> lines = Files.lines(process.resolve("maps"))) {
            lines.forEach(line -> {
                int slash = line.indexOf('/');
                if (slash >= 0) {
                    paths.add(stripDeleted(line.substring(slash)));
                }
            });
        } catch (IOException | RuntimeException e) {
            // Process gone, or not ours to read.
        }
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(process.resolve("fd"))) {
            for (Path fd : fds) {
                try {
                    paths.add(stripDeleted(Files.readSymbolicLink(fd).toString()));
                } catch (IOException | RuntimeException e) {
                    // Closed meanwhile.
                }
            }
        } catch (IOException | RuntimeException e) {
            // Process gone, or not ours to read.
        }
    }

    private static String stripDeleted(String path) {
        return path.endsWith(DELETED) ? path.substring(0, path.length() - DELETED.length()) : path;
    }

    private static void delete(Path copy) {
        try {
            Files.deleteIfExists(copy);
        } catch (IOException e) {
            // Best effort: a copy we cannot delete only costs disk space.
        }
    }
}
