package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.UnavailableException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * Election on a local root: an exclusive OS lock on {@code <experiment>/maintenance.lock}. The OS
 * releases it when the holder's process dies, so the role survives the holder's death without any
 * expiry.
 */
final class FileLockElection implements Election {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FileLockElection.class);

    private final FileChannel channel;
    private final FileLock lock;

    private final Path lockFile;

    private FileLockElection(FileChannel channel, FileLock lock, Path lockFile) {
        this.channel = channel;
        this.lock = lock;
        this.lockFile = lockFile;
    }

    static Optional<Election> tryAcquire(LogLocation loc) {
        return tryAcquire(loc.experimentDir().resolve("maintenance.lock"));
    }

    /**
     * Tries to lock {@code p} (created with its directory if missing). Empty if another process, or this JVM, holds
     * it.
     */
    static Optional<Election> tryAcquire(Path p) {
        FileChannel ch = null;
        try {
            java.nio.file.Files.createDirectories(p.getParent());
            ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock l = ch.tryLock();
            if (l == null) {
                ch.close();
                return Optional.empty();
            }
            return Optional.of(new FileLockElection(ch, l, p));
        } catch (OverlappingFileLockException sameJvm) {
            closeQuietly(ch);
            return Optional.empty();
        } catch (IOException e) {
            closeQuietly(ch);
            throw new UnavailableException("locking " + p + " failed: " + e.getMessage(), e);
        }
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            if (ch != null) {
                ch.close();
            }
        } catch (IOException ignored) {
            // Nothing held yet.
        }
    }

    private String lockPath() {
        return String.valueOf(lockFile);
    }

    @Override
    public void confirm() {
        if (!lock.isValid()) {
            throw new FencedException("lock " + lockPath() + " was released");
        }
    }

    @Override
    public void release() {
        try {
            lock.release();
            channel.close();
        } catch (IOException e) {
            LOG.warn("releasing lock {} failed: {}", lockPath(), e.getMessage());
        }
    }
}
