package dev.vigilo.web;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Which session logs the dashboard may open by path: exactly the files named on the command line, and files named
 * {@code *.jsonl.zstd} below the allowed roots (Vigilo home). A path is checked twice, and must pass both: as written
 * (normalized, so {@code ..} cannot climb out; before the file system is touched, so a refusal does not tell whether
 * something exists there) and as the file system resolves it (symbolic links followed, and {@code ..} after a
 * linked directory climbing from the link's target, as the operating system would open it). Roots and files are
 * known both as given and as resolved, so a Vigilo home reached through a link accepts paths written either way.
 */
final class SessionFiles {
    /** Refused: the path lies outside what this dashboard may read. */
    static final class Forbidden extends RuntimeException {
        Forbidden(String message) {
            super(message, null, false, false);
        }
    }

    /** Below a root only session logs by name: other files there (a database, object bytes) are never opened. */
    static final String SUFFIX = ".jsonl.zstd";

    /** The given files and roots, normalized, as written. */
    private final List<Path> givenFiles = new ArrayList<>();

    private final List<Path> givenRoots = new ArrayList<>();
    /** The same, resolved (links followed) where they exist. */
    private final List<Path> files = new ArrayList<>();

    private final List<Path> roots = new ArrayList<>();

    SessionFiles(List<Path> files, List<Path> roots) {
        for (Path f : files) {
            Path normal = f.toAbsolutePath().normalize();
            this.givenFiles.add(normal);
            this.files.add(real(normal));
        }
        for (Path r : roots) {
            Path normal = r.toAbsolutePath().normalize();
            this.givenRoots.add(normal);
            this.roots.add(real(normal));
        }
    }

    /** Real path when it exists (so later comparisons are between real paths), else the normalized one. */
    private static Path real(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p;
        }
    }

    List<Path> files() {
        return List.copyOf(files);
    }

    List<Path> roots() {
        return List.copyOf(roots);
    }

    /** A session log found below a root: its path as {@link #resolve} takes it, its size and last change. */
    record Listed(Path path, long bytes, java.time.Instant modified) {}

    /**
     * What {@link #list} found: the newest session logs first, and whether the look stopped at its bound of entries
     * (then older or deeper logs may exist beyond those listed).
     */
    record Found(List<Listed> logs, boolean stopped, long looked) {}

    /**
     * The session logs below the roots (Vigilo home), newest first, at most {@code max}: a walk that follows no
     * symbolic link (a link in home could point anywhere; {@link #resolve} would refuse what it reaches outside anyway)
     * and looks at no more than {@code lookAt} entries in all, so a home holding a large local object store costs a
     * bounded time per request. Unreadable directories are skipped.
     */
    Found list(int max, long lookAt) {
        List<Listed> out = new ArrayList<>();
        long[] looked = {0};
        boolean[] stopped = {false};
        for (Path root : roots) {
            if (stopped[0] || !Files.isDirectory(root)) {
                continue;
            }
            try {
                Files.walkFileTree(
                        root,
                        java.util.EnumSet.noneOf(java.nio.file.FileVisitOption.class),
                        32,
                        new java.nio.file.SimpleFileVisitor<>() {
                            @Override
                            public java.nio.file.FileVisitResult preVisitDirectory(
                                    Path dir, java.nio.file.attribute.BasicFileAttributes attrs) {
                                return count();
                            }

                            @Override
                            public java.nio.file.FileVisitResult visitFile(
                                    Path file, java.nio.file.attribute.BasicFileAttributes attrs) {
                                if (attrs.isRegularFile()
                                        && file.getFileName().toString().endsWith(SUFFIX)) {
                                    out.add(new Listed(
                                            file,
                                            attrs.size(),
                                            attrs.lastModifiedTime().toInstant()));
                                }
                                return count();
                            }

                            @Override
                            public java.nio.file.FileVisitResult visitFileFailed(Path file, IOException e) {
                                return count();
                            }

                            private java.nio.file.FileVisitResult count() {
                                if (++looked[0] >= lookAt) {
                                    stopped[0] = true;
                                    return java.nio.file.FileVisitResult.TERMINATE;
                                }
                                return java.nio.file.FileVisitResult.CONTINUE;
                            }
                        });
            } catch (IOException e) {
                // The root itself cannot be read: nothing listed from it.
            }
        }
        out.sort(java.util.Comparator.comparing(Listed::modified).reversed().thenComparing(Listed::path));
        return new Found(out.size() > max ? List.copyOf(out.subList(0, max)) : List.copyOf(out), stopped[0], looked[0]);
    }

    /** Whether {@code p} is one of {@code files}, or a session log by name below one of {@code roots}. */
    private static boolean allowed(Path p, List<Path> files, List<Path> roots) {
        if (files.contains(p)) {
            return true;
        }
        if (p.getFileName() == null || !p.getFileName().toString().endsWith(SUFFIX)) {
            return false;
        }
        for (Path r : roots) {
            if (p.startsWith(r) && !p.equals(r)) {
                return true;
            }
        }
        return false;
    }

    /** The path as written (normalized): the files and roots as given or as resolved. */
    private boolean allowedAsWritten(Path normal) {
        return allowed(normal, givenFiles, givenRoots) || allowed(normal, files, roots);
    }

    /**
     * The session log {@code text} names.
     *
     * @throws InvalidInputException it is not an absolute path
     * @throws Forbidden             as written, or as resolved, it lies outside the allowed files and roots
     * @throws NotFoundException     it is allowed but no regular file is there
     */
    Path resolve(String text) {
        if (text.indexOf('\0') >= 0) {
            throw new InvalidInputException("a path cannot contain a NUL character");
        }
        Path p;
        try {
            p = Path.of(text);
        } catch (InvalidPathException e) {
            throw new InvalidInputException("not a path: " + e.getReason());
        }
        if (!p.isAbsolute()) {
            throw new InvalidInputException("give the session log's absolute path");
        }
        Path normal = p.normalize();
        if (!allowedAsWritten(normal)) {
            throw new Forbidden("this dashboard opens only the session logs given to it and those under " + roots
                    + "; start `vigilo session view FILE` to view another file");
        }
        Path real;
        try {
            // The path as written, not its normalized form: the file system follows "d/.." from d's target.
            real = p.toRealPath();
        } catch (NoSuchFileException e) {
            throw new NotFoundException(normal + ": no such session log file");
        } catch (IOException e) {
            throw new NotFoundException(normal + ": cannot be read (" + e.getMessage() + ")");
        }
        if (!allowed(real, files, roots)) {
            throw new Forbidden(normal + " resolves (through a symbolic link) outside what this dashboard may read");
        }
        if (!Files.isRegularFile(real)) {
            throw new NotFoundException(normal + " is not a regular file; give the session log file");
        }
        return real;
    }
}
