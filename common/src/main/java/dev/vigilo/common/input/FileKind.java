package dev.vigilo.common.input;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The kinds of directory entry, named the way messages name them. The file type bits of {@code st_mode} tell a pipe
 * from a device or a socket; where the JDK offers no {@code unix} attribute view (not on Linux or macOS), every such
 * entry is {@link #SPECIAL}.
 */
enum FileKind {
    REGULAR("a regular file"),
    DIRECTORY("a directory"),
    FIFO("a named pipe (FIFO)"),
    CHARACTER_DEVICE("a character device (such as /dev/null)"),
    BLOCK_DEVICE("a block device"),
    SOCKET("a socket"),
    SPECIAL("a pipe, a device or a socket");

    // File type bits of st_mode (sys/stat.h), the same on Linux and macOS.
    private static final int S_IFMT = 0170000;
    private static final int S_IFIFO = 0010000;
    private static final int S_IFCHR = 0020000;
    private static final int S_IFBLK = 0060000;
    private static final int S_IFSOCK = 0140000;

    private final String noun;

    FileKind(String noun) {
        this.noun = noun;
    }

    /** What a message calls this kind, e.g. {@code "a named pipe (FIFO)"}. */
    String noun() {
        return noun;
    }

    /** The kind of {@code file}, whose {@code attributes} were just read. */
    static FileKind of(Path file, BasicFileAttributes attributes) {
        if (attributes.isRegularFile()) {
            return REGULAR;
        }
        if (attributes.isDirectory()) {
            return DIRECTORY;
        }
        int mode;
        try {
            mode = (Integer) Files.getAttribute(file, "unix:mode");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            return SPECIAL;
        }
        return switch (mode & S_IFMT) {
            case S_IFIFO -> FIFO;
            case S_IFCHR -> CHARACTER_DEVICE;
            case S_IFBLK -> BLOCK_DEVICE;
            case S_IFSOCK -> SOCKET;
            default -> SPECIAL;
        };
    }
}
