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

    private FileLockElection(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    static Optional<Election> tryAcquire(LogLocation loc) {
        Path p = loc.experimentDir().resolve("maintenance.lock");
        FileChannel ch = null;
        try {
            ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock l = ch.tryLock();
            if (l == null) {
                ch.close();
                return Optional.empty();
            }
            return Optional.of(new FileLockElection(ch, l));
        } catch (OverlappingFileLockException sameJvm) {
            closeQuietly(ch);
            return Optional.empty();
        } catch (IOException e) {
            closeQuietly(ch);
            throw new UnavailableException("maintenance election on " + p + " failed: " + e.getMessage(), e);
        }
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            if (ch != null) ch.close();
        } catch (IOException ignored) {
            // Nothing held yet.
        }
    }

    @Override
    public void confirm() {
        if (!lock.isValid()) throw new FencedException("maintenance lock was released");
    }

    @Override
    public void release() {
        try {
            lock.release();
            channel.close();
        } catch (IOException e) {
            LOG.warn("releasing maintenance lock failed: {}", e.getMessage());
        }
    }
}
