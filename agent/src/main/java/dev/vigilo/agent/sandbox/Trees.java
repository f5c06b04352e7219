package dev.vigilo.agent.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/** Copying, emptying and reading the directory trees of sandboxes; symbolic links are never followed. */
final class Trees {
    private Trees() {}

    /** Copies the tree {@code from} into the existing directory {@code to}, links as links. */
    static void copy(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Path target = to.resolve(from.relativize(dir).toString());
                if (!dir.equals(from)) {
                    Files.copy(dir, target, StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.copy(
                        file,
                        to.resolve(from.relativize(file).toString()),
                        StandardCopyOption.COPY_ATTRIBUTES,
                        LinkOption.NOFOLLOW_LINKS);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /** Deletes {@code dir} and everything in it; a missing directory is no error. */
    static void delete(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) {
                // A sandboxed command may have taken its own permissions away from a directory it made.
                try {
                    Files.setPosixFilePermissions(d, EnumSet.allOf(PosixFilePermission.class));
                } catch (IOException | UnsupportedOperationException e) {
                    // Deleting says what is wrong, if anything is.
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null) {
                    throw e;
                }
                Files.delete(d);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /** Deletes what {@code dir} holds, keeping it. */
    static void empty(Path dir) throws IOException {
        try (var children = Files.list(dir)) {
            for (Path child : (Iterable<Path>) children::iterator) {
                if (Files.isDirectory(child, LinkOption.NOFOLLOW_LINKS)) {
                    delete(child);
                } else {
                    Files.delete(child);
                }
            }
        }
    }

    /**
     * The regular files under {@code dir} whose relative path matches one of {@code globs}, in path order, until
     * {@code maxFiles} files or {@code maxBytes} bytes together: a file that would go past the byte bound is left
     * out, and so are links, devices and pipes.
     */
    static List<KeptFile> matching(Path dir, List<String> globs, int maxFiles, long maxBytes) throws IOException {
        if (globs.isEmpty() || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        List<PathMatcher> matchers = new ArrayList<>();
        for (String g : globs) {
            matchers.add(FileSystems.getDefault().getPathMatcher("glob:" + g));
        }
        TreeMap<String, Path> found = new TreeMap<>();
        Files.walkFileTree(dir, Set.of(), Integer.MAX_VALUE, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                Path rel = dir.relativize(file);
                if (attrs.isRegularFile() && matchers.stream().anyMatch(m -> m.matches(rel))) {
                    found.put(rel.toString().replace(file.getFileSystem().getSeparator(), "/"), file);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
                return FileVisitResult.CONTINUE; // unreadable: not kept
            }
        });
        List<KeptFile> out = new ArrayList<>();
        long total = 0;
        for (var e : found.entrySet()) {
            if (out.size() >= maxFiles) {
                break;
            }
            long left = maxBytes - total;
            byte[] bytes;
            try (InputStream in = Files.newInputStream(e.getValue(), LinkOption.NOFOLLOW_LINKS)) {
                bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, left + 1));
            } catch (IOException ex) {
                continue;
            }
            if (bytes.length > left) {
                continue;
            }
            total += bytes.length;
            out.add(new KeptFile(e.getKey(), bytes));
        }
        return out;
    }
}
