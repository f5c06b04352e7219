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
 * {@code *.jsonl.zstd} below the allowed roots (Vigilo home). A path is checked twice: as written (normalized, so {@code ..} cannot climb out)
 * and after resolving symbolic links (so a link inside a root cannot point outside it). Anything else is refused
 * before the file is touched, so the answer does not even tell whether it exists.
 */
final class SessionFiles {
    /** Refused: the path lies outside what this dashboard may read. */
    static final class Forbidden extends RuntimeException {
        Forbidden(String message) {
            super(message, null, false, false);
        }
    }

    private final List<Path> files = new ArrayList<>();
    private final List<Path> roots = new ArrayList<>();

    SessionFiles(List<Path> files, List<Path> roots) {
        for (Path f : files) {
            this.files.add(real(f.toAbsolutePath().normalize()));
        }
        for (Path r : roots) {
            this.roots.add(real(r.toAbsolutePath().normalize()));
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

    /** Below a root only session logs by name: other files there (a database, object bytes) are never opened. */
    static final String SUFFIX = ".jsonl.zstd";

    private boolean allowed(Path p) {
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

    /**
     * The session log {@code text} names.
     *
     * @throws InvalidInputException it is not an absolute path
     * @throws Forbidden             it lies outside the allowed files and roots (also after following links)
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
        if (!allowed(normal) && !allowed(real(normal))) {
            throw new Forbidden("this dashboard opens only the session logs given to it and those under " + roots
                    + "; start `vigilo session view FILE` to view another file");
        }
        Path real;
        try {
            real = normal.toRealPath();
        } catch (NoSuchFileException e) {
            throw new NotFoundException(normal + ": no such session log file");
        } catch (IOException e) {
            throw new NotFoundException(normal + ": cannot be read (" + e.getMessage() + ")");
        }
        if (!allowed(real)) {
            throw new Forbidden(normal + " resolves (through a symbolic link) outside what this dashboard may read");
        }
        if (!Files.isRegularFile(real)) {
            throw new NotFoundException(normal + " is not a regular file; give the session log file");
        }
        return real;
    }
}
