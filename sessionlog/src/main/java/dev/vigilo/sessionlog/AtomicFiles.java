package dev.vigilo.sessionlog;

import dev.vigilo.common.crash.CrashPoints;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/** The one crash-safe local write helper: temp file, write, fsync, atomic move (or link), fsync the directory. */
final class AtomicFiles {
    private AtomicFiles() {}

    static Path tempBeside(Path target) {
        return target.resolveSibling("." + target.getFileName() + ".tmp-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong()));
    }

    static void writeFully(FileChannel ch, byte[] b) throws IOException {
        ByteBuffer bb = ByteBuffer.wrap(b);
        while (bb.hasRemaining()) ch.write(bb);
    }

    /** Replaces {@code target} atomically with {@code content}. */
    static void replace(Path target, byte[] content) throws IOException {
        Path tmp = tempBeside(target);
        try {
            CrashPoints.boundary("sessionlog.replace.tmp");
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                writeFully(ch, content);
                ch.force(true);
            }
            try {
                CrashPoints.boundary("sessionlog.replace.rename");
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException(
                        "the file system of " + target
                                + " cannot rename atomically; session logs need a local POSIX file system",
                        e);
            }
            fsyncDir(target.toAbsolutePath().getParent());
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** Moves a fully written and fsynced {@code tmp} to {@code target}: atomic, replacing only when {@code replace}. */
    static void publish(Path tmp, Path target, boolean replace) throws IOException {
        CrashPoints.boundary("sessionlog.publish");
        if (replace) {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } else {
            Files.createLink(target, tmp); // fails if target exists: never overwrite
            Files.delete(tmp);
        }
        fsyncDir(target.toAbsolutePath().getParent());
    }

    static void fsyncDir(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
