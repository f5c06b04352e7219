package dev.vigilo.control;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Objects;

/**
 * An exclusive lock on {@code server.lock}, held across processes (an OS file lock, released by the kernel if the
 * holder dies) and across threads of one JVM (where the OS lock is per process, so overlapping attempts are
 * retried).
 *
 * <p>Clients hold it while they register and, if needed, start a host; the host holds it while it decides to stop.
 * That makes "a client registered" and "the host stopped" mutually exclusive.
 */
final class ServerLock implements AutoCloseable {

    private static final long RETRY_MILLIS = 25;

    private final FileChannel channel;
    private final FileLock lock;

    private ServerLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Waits up to {@code timeout} for the lock.
     *
     * @throws LockTimeoutException if another process or thread held it for the whole time
     * @throws UncheckedIOException if the lock file cannot be opened
     */
    static ServerLock acquire(Path file, Duration timeout) throws InterruptedException {
        Objects.requireNonNull(file, "file");
        long deadline = System.nanoTime() + timeout.toNanos();
        FileChannel channel;
        try {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open lock file " + file, e);
        }
        try {
            while (true) {
                FileLock lock = tryLock(channel);
                if (lock != null) {
                    return new ServerLock(channel, lock);
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new LockTimeoutException(file, timeout);
                }
                Thread.sleep(RETRY_MILLIS);
            }
        } catch (InterruptedException | RuntimeException e) {
            closeQuietly(channel);
            throw e;
        }
    }

    private static FileLock tryLock(FileChannel channel) {
        try {
            return channel.tryLock();
        } catch (OverlappingFileLockException e) {
            return null; // another thread of this JVM holds it
        } catch (IOException e) {
            throw new UncheckedIOException("cannot lock file", e);
        }
    }

    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException ignored) {
            // closing the channel below releases it too
        }
        closeQuietly(channel);
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // nothing more to release
        }
    }

    /** The lock was held by someone else for longer than the caller was willing to wait. */
    static final class LockTimeoutException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LockTimeoutException(Path file, Duration timeout) {
            super("timed out after " + timeout.toSeconds() + " s waiting for the lock " + file);
        }
    }
}
