package dev.vigilo.common.io;

import dev.vigilo.common.crash.CrashPoints;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The one crash-safe local write: a temporary file beside the target, written, forced to disk, published by an atomic
 * rename (or a hard link, which never replaces), then the directory forced so that the new name survives a power
 * loss too. As Kafka's {@code CheckpointFile.write} and {@code Utils.atomicMoveWithFallback}, except that there is no
 * non-atomic fallback: a file system that cannot rename atomically is an error, never a silent half-write.
 *
 * <p>Contract of {@link #write} and {@link #replace}:
 *
 * <ul>
 *   <li>When they return, the target holds exactly the new content, durably (file and directory entry forced).
 *   <li>When they throw, the target is as it was (the old content, or absent) and the temporary file is removed.
 *   <li>A crash (power loss, {@code kill -9}) at any point leaves the target either with its complete old content
 *       (or absent) or with its complete new content, never a mixture; before the rename it can also leave a
 *       temporary file {@code .<name>.tmp-<random>} beside the target, which readers never take for the target
 *       and which the owner may delete while no write is in progress ({@link #isTemporaryOf}).
 *   <li>{@link Mode#CREATE_NEW} never replaces a file, even one created by another process while the content was
 *       written: the publication then fails with {@link FileAlreadyExistsException} and nothing is changed.
 * </ul>
 *
 * <p>The temporary file is created with the default permissions of new files (as a shell redirection creates them).
 * Stateless and thread-safe; two concurrent {@link Mode#REPLACE} writes of one target leave one of the two contents.
 */
public final class AtomicFiles {
    /** Windows cannot open a directory as a channel; NTFS journals directory entries itself. */
    private static final boolean DIRECTORY_FSYNC =
            !System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows");

    private static final String TEMPORARY_INFIX = ".tmp-";

    private AtomicFiles() {}

    /** How the written file is published. */
    public enum Mode {
        /** An atomic rename that replaces an existing target. */
        REPLACE,
        /** A hard link that fails with {@link FileAlreadyExistsException} if the target exists. */
        CREATE_NEW
    }

    /** Writes the content of a file to its channel; may return a value (a count, a summary) to the caller. */
    @FunctionalInterface
    public interface ChannelContent<T> {
        T writeTo(FileChannel channel) throws IOException;
    }

    /** Writes the content of a file to a buffered stream, which the helper flushes and closes. */
    @FunctionalInterface
    public interface StreamContent<T> {
        T writeTo(OutputStream out) throws IOException;
    }

    /**
     * A fresh temporary name beside {@code target}: {@code .<name>.tmp-<random hex>} in the same directory, so the
     * rename stays in one file system and the name is hidden from listings that skip dot files.
     */
    public static Path tempBeside(Path target) {
        return target.resolveSibling("." + target.getFileName() + TEMPORARY_INFIX
                + Long.toHexString(ThreadLocalRandom.current().nextLong()));
    }

    /** Whether {@code file} is a temporary file that a write of {@code target} left (see {@link #tempBeside}). */
    public static boolean isTemporaryOf(Path file, Path target) {
        Path name = file.getFileName();
        return name != null && name.toString().startsWith("." + target.getFileName() + TEMPORARY_INFIX);
    }

    /** Writes all of {@code bytes} at the channel's position (a channel may write fewer bytes per call). */
    public static void writeFully(FileChannel channel, byte[] bytes) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    /** Replaces {@code target} with {@code content} (see the class contract). */
    public static void replace(Path target, byte[] content) throws IOException {
        replace(target, content, null);
    }

    /**
     * As {@link #replace(Path, byte[])}, marking the crash boundaries {@code <boundary>.tmp} (before the temporary
     * file is written) and {@code <boundary>.rename} (before the rename) when {@code boundary} is not null.
     */
    public static void replace(Path target, byte[] content, String boundary) throws IOException {
        Objects.requireNonNull(content, "content");
        write(target, Mode.REPLACE, boundary, channel -> {
            writeFully(channel, content);
            return null;
        });
    }

    /**
     * Writes the file {@code content} produces and publishes it at {@code target} by {@code mode} (see the class
     * contract); returns what {@code content} returned.
     *
     * @param boundary when not null, the crash boundaries {@code <boundary>.tmp} and {@code <boundary>.rename} are
     *     marked before the temporary file is written and before it is published
     * @throws FileAlreadyExistsException with {@link Mode#CREATE_NEW}, if the target exists
     * @throws IOException when a step fails, or the file system cannot rename atomically
     */
    public static <T> T write(Path target, Mode mode, String boundary, ChannelContent<T> content) throws IOException {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(content, "content");
        Path tmp = tempBeside(target);
        try {
            if (boundary != null) {
                CrashPoints.boundary(boundary + ".tmp");
            }
            T result;
            try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                result = content.writeTo(channel);
                channel.force(true);
            }
            if (boundary != null) {
                CrashPoints.boundary(boundary + ".rename");
            }
            publish(tmp, target, mode);
            return result;
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** As {@link #write(Path, Mode, String, ChannelContent)}, with the content written to a buffered stream. */
    public static <T> T write(Path target, Mode mode, StreamContent<T> content) throws IOException {
        Objects.requireNonNull(content, "content");
        return write(target, mode, null, channel -> {
            // Not closed here: closing the stream would close the channel before it is forced.
            OutputStream out = new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 16);
            T result = content.writeTo(out);
            out.flush();
            return result;
        });
    }

    /**
     * Publishes a temporary file that the caller wrote completely and forced to disk: moves it to {@code target} by
     * {@code mode}, then forces the directory. With {@link Mode#CREATE_NEW} the temporary name is removed after the
     * link; on failure the caller removes it.
     *
     * @throws FileAlreadyExistsException with {@link Mode#CREATE_NEW}, if the target exists
     */
    public static void publish(Path tmp, Path target, Mode mode) throws IOException {
        if (mode == Mode.REPLACE) {
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException(
                        "the file system of " + target + " cannot rename atomically; use a local POSIX file system", e);
            }
        } else {
            Files.createLink(target, tmp); // fails if target exists: never overwrite
            Files.delete(tmp);
        }
        fsyncDirectory(target.toAbsolutePath().getParent());
    }

    /** Forces {@code directory}'s entries to disk, so a rename or link in it survives a power loss. */
    public static void fsyncDirectory(Path directory) throws IOException {
        if (!DIRECTORY_FSYNC) {
            return;
        }
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }
}
