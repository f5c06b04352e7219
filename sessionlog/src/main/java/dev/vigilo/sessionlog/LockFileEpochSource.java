package dev.vigilo.sessionlog;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.UnavailableException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Local epochs: an exclusive OS lock on {@code <log>.lock}, a file holding the last granted epoch as decimal
 * text. Acquiring takes the lock (non-blocking), grants max(stored + 1, atLeast), writes and fsyncs it, and
 * keeps the lock until the lease is closed, so epochs are monotonic per log across processes and crashes
 * (a crashed holder's OS lock is released by the kernel). Stateless and thread-safe.
 */
public final class LockFileEpochSource implements EpochSource {
    /** @return the lock file path of a log */
    public static Path lockPathFor(Path log) {
        return log.resolveSibling(log.getFileName().toString() + ".lock");
    }

    @Override
    public WriterLease acquire(Path log, Epoch atLeast) {
        Path p = lockPathFor(log);
        FileChannel ch = null;
        try {
            ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                ch.close();
                throw new FencedException(
                        "another writer holds " + p + "; close it first (one writer per session log)");
            }
            ByteBuffer b = ByteBuffer.allocate((int) Math.min(64, ch.size()));
            ch.read(b, 0);
            String s = new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII).trim();
            long stored;
            try {
                stored = s.isEmpty() ? -1 : Long.parseLong(s);
            } catch (NumberFormatException e) {
                lock.release();
                ch.close();
                throw new CorruptSessionLogException(
                        "lock file " + p + " does not hold an epoch number (\"" + s
                                + "\"); delete it only if no writer runs",
                        -1);
            }
            Epoch granted = new Epoch(Math.max(stored + 1, atLeast.value()));
            CrashPoints.boundary("sessionlog.epoch.truncate");
            ch.truncate(0);
            CrashPoints.boundary("sessionlog.epoch.write");
            ch.write(ByteBuffer.wrap((granted.value() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
            ch.force(true);
            final FileChannel held = ch;
            final FileLock heldLock = lock;
            return new WriterLease() {
                @Override
                public Epoch epoch() {
                    return granted;
                }

                @Override
                public void checkCurrent() {
                    if (!heldLock.isValid()) {
                        throw new FencedException("lease on " + p + " for epoch " + granted.value() + " was released");
                    }
                }

                @Override
                public void close() {
                    try {
                        if (heldLock.isValid()) {
                            heldLock.release();
                        }
                        held.close();
                    } catch (IOException e) {
                        throw new UnavailableException("cannot release " + p + ": " + e.getMessage(), e);
                    }
                }
            };
        } catch (IOException e) {
            try {
                if (ch != null) {
                    ch.close();
                }
            } catch (IOException ignored) {
                // already failing
            }
            throw new UnavailableException("cannot acquire writer epoch via " + p + ": " + e.getMessage(), e);
        }
    }
}
