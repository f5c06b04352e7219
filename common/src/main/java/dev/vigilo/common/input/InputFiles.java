package dev.vigilo.common.input;

import dev.vigilo.common.errors.InvalidInputException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;
import java.util.Optional;

/**
 * The one rule for a file a user names as input (a profile, a pipeline and its seed input, a storage or execution
 * configuration, a dataset to upload, a session log): it must exist and be a readable regular file (symbolic links
 * are followed). Anything else is refused <em>before it is opened</em>, because opening is where a named pipe
 * blocks: {@code open(2)} of a FIFO waits, uninterruptibly, until another process opens it for writing, and a
 * device such as {@code /dev/zero} never ends. The check reads only metadata ({@code stat(2)}), which never blocks
 * on a pipe. {@link #directoryProblem} is the same rule for a directory a user names (a local store's root).
 *
 * <p>Modules call {@link #problem} where they open the file and report it in their own exception type (so an
 * exception that carries a file position keeps it), or {@link #check} for an {@link InvalidInputException} (exit
 * 3). Stateless and thread-safe. A file replaced by a pipe between the check and the open is not caught (Java has no
 * non-blocking open); the check is for the mistakes users make, not for an adversary who controls the directory.
 */
public final class InputFiles {
    private InputFiles() {}

    /**
     * What is wrong with {@code file} as an input file, as the words that follow its name in a message (for example
     * {@code "is a named pipe (FIFO), not a regular file"}, {@code "does not exist"}); empty when it is a readable
     * regular file.
     */
    public static Optional<String> problem(Path file) {
        Objects.requireNonNull(file, "file");
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (IOException e) {
            return Optional.of(unreadable(e));
        }
        FileKind kind = FileKind.of(file, attributes);
        if (kind != FileKind.REGULAR) {
            return Optional.of("is " + kind.noun() + ", not a regular file");
        }
        return Files.isReadable(file) ? Optional.empty() : Optional.of("cannot be read (permission denied)");
    }

    /**
     * {@code file} if it is a readable regular file.
     *
     * @param what what the file is, for the message (e.g. {@code "--profile-file"}, {@code "storage config"})
     * @param hint what to do, for the message (e.g. {@code "give the path of a YAML or JSON file"})
     * @throws InvalidInputException {@code "WHAT FILE PROBLEM; HINT"} otherwise
     */
    public static Path check(Path file, String what, String hint) {
        Optional<String> problem = problem(file);
        if (problem.isPresent()) {
            throw new InvalidInputException(what + " " + file + " " + problem.get() + "; " + hint);
        }
        return file;
    }

    /**
     * What is wrong with {@code directory} as a directory Vigilo may create and use, as the words that follow its
     * name (for example {@code "is a named pipe (FIFO), not a directory"}); empty when it is a directory or does not
     * exist yet.
     */
    public static Optional<String> directoryProblem(Path directory) {
        Objects.requireNonNull(directory, "directory");
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(directory, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of(unreadable(e));
        }
        FileKind kind = FileKind.of(directory, attributes);
        return kind == FileKind.DIRECTORY ? Optional.empty() : Optional.of("is " + kind.noun() + ", not a directory");
    }

    private static String unreadable(IOException e) {
        if (e instanceof NoSuchFileException) {
            return "does not exist";
        }
        if (e instanceof AccessDeniedException) {
            return "cannot be read (permission denied)";
        }
        return "cannot be read (" + reason(e) + ")";
    }

    private static String reason(IOException e) {
        if (e instanceof FileSystemException f && f.getReason() != null) {
            // "/a/b: Not a directory" -> "Not a directory": the caller prints the path itself.
            return f.getReason();
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
