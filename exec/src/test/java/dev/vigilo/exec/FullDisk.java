package dev.vigilo.exec;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

/**
 * A small tmpfs mounted for one test, which the test can fill up (every write then fails with ENOSPC, "No space left
 * on device", as on a full disk) and free again. Mounting needs root (CAP_SYS_ADMIN); {@link #mount} says so when it
 * cannot.
 */
final class FullDisk implements AutoCloseable {
    private final Path mountPoint;
    private final Path filler;

    private FullDisk(Path mountPoint) {
        this.mountPoint = mountPoint;
        this.filler = mountPoint.resolve(".filler");
    }

    /**
     * Mounts a tmpfs of {@code mebibytes} at {@code mountPoint} (an empty directory).
     *
     * @throws IllegalStateException when it cannot be mounted (the message says why: not root, no mount permission)
     */
    static FullDisk mount(Path mountPoint, int mebibytes) throws IOException, InterruptedException {
        Files.createDirectories(mountPoint);
        run("mount", "-t", "tmpfs", "-o", "size=" + mebibytes + "m", "tmpfs", mountPoint.toString());
        return new FullDisk(mountPoint);
    }

    Path root() {
        return mountPoint;
    }

    /** Fills the filesystem: writes one file until the kernel refuses a single byte more. */
    void fill() throws IOException {
        byte[] big = new byte[1 << 20];
        try (OutputStream out = Files.newOutputStream(filler, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            for (byte[] block : new byte[][] {big, new byte[4096], new byte[1]}) {
                try {
                    while (true) {
                        out.write(block);
                        out.flush();
                    }
                } catch (IOException full) {
                    // Full for blocks of this size: go on with smaller ones.
                }
            }
        } catch (IOException full) {
            // Closing flushes nothing more: the filesystem is full.
        }
        try {
            Files.writeString(mountPoint.resolve(".probe"), "x");
            throw new IllegalStateException("the tmpfs at " + mountPoint + " still takes writes after filling it");
        } catch (IOException expected) {
            // ENOSPC: full.
        }
    }

    /** Frees the space {@link #fill} took. */
    void free() throws IOException {
        Files.deleteIfExists(filler);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        run("umount", "-l", mountPoint.toString());
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(
                    String.join(" ", command) + " failed (this test needs root to mount a" + " tmpfs): " + out.strip());
        }
    }
}
