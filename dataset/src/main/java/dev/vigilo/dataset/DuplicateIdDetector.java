package dev.vigilo.dataset;

import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.storage.Sha256;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * Finds whether any case id repeats, in bounded memory, however many cases a file has.
 *
 * <p>Each id is reduced to a 64-bit fingerprint (the first 8 bytes of its SHA-256). Fingerprints fill a fixed-size
 * {@code long[]}; a full buffer is sorted and spilled as a run to a temporary file; {@link #repeatedFingerprints()}
 * merges the runs and returns every fingerprint seen more than once. A repeated fingerprint is only a candidate:
 * the caller re-reads the file to find the lines and compare the real ids (two different ids can share a
 * fingerprint, rarely). Memory: {@code 8 * bufferEntries} bytes plus the candidates. Not thread-safe.
 */
final class DuplicateIdDetector implements AutoCloseable {
    /** Stop collecting candidates past this many; the re-read confirms the first real duplicate among them. */
    static final int MAX_CANDIDATES = 1 << 16;

    private final long[] buffer;
    private int size;
    private final List<Path> runs = new ArrayList<>();
    private Path spillDir;
    private final MessageDigest digest = Sha256.newDigest();

    DuplicateIdDetector(int bufferEntries) {
        this.buffer = new long[bufferEntries];
    }

    private static final java.lang.invoke.VarHandle BIG_ENDIAN_LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.BIG_ENDIAN);

    static long fingerprint(MessageDigest digest, String id) {
        return ByteBuffer.wrap(digest.digest(id.getBytes(StandardCharsets.UTF_8)))
                .getLong();
    }

    /**
     * The fingerprint of the id whose UTF-8 bytes are {@code utf8[offset, offset + length)}, equal to
     * {@link #fingerprint(MessageDigest, String)} of that id; {@code scratch} (32 bytes) receives the digest.
     */
    static long fingerprint(MessageDigest digest, byte[] scratch, byte[] utf8, int offset, int length) {
        digest.update(utf8, offset, length);
        try {
            digest.digest(scratch, 0, Sha256.LENGTH);
        } catch (java.security.DigestException e) {
            throw new IllegalStateException("a SHA-256 digest needs 32 bytes", e);
        }
        return (long) BIG_ENDIAN_LONGS.get(scratch, 0);
    }

    void add(String id) {
        add(fingerprint(digest, id));
    }

    /** Adds the fingerprint of one id (see {@link #fingerprint}). */
    void add(long fingerprint) {
        if (size == buffer.length) {
            spill();
        }
        buffer[size++] = fingerprint;
    }

    /** Fingerprints that occur more than once (at most {@link #MAX_CANDIDATES}). Consumes the detector. */
    Set<Long> repeatedFingerprints() {
        Set<Long> repeated = new HashSet<>();
        if (runs.isEmpty()) {
            Arrays.parallelSort(buffer, 0, size);
            for (int i = 1; i < size && repeated.size() < MAX_CANDIDATES; i++) {
                if (buffer[i] == buffer[i - 1]) {
                    repeated.add(buffer[i]);
                }
            }
            return repeated;
        }
        if (size > 0) {
            spill();
        }
        List<RunCursor> cursors = new ArrayList<>();
        try {
            PriorityQueue<RunCursor> heap = new PriorityQueue<>((a, b) -> Long.compare(a.value, b.value));
            for (Path run : runs) {
                RunCursor c = new RunCursor(run);
                cursors.add(c);
                if (c.advance()) {
                    heap.add(c);
                }
            }
            boolean havePrevious = false;
            long previous = 0;
            while (!heap.isEmpty() && repeated.size() < MAX_CANDIDATES) {
                RunCursor c = heap.poll();
                if (havePrevious && c.value == previous) {
                    repeated.add(c.value);
                }
                havePrevious = true;
                previous = c.value;
                if (c.advance()) {
                    heap.add(c);
                }
            }
            return repeated;
        } finally {
            for (RunCursor c : cursors) {
                c.close();
            }
        }
    }

    private void spill() {
        Arrays.parallelSort(buffer, 0, size);
        try {
            if (spillDir == null) {
                spillDir = Files.createTempDirectory("vigilo-ids-");
            }
            Path run = spillDir.resolve("run-" + runs.size());
            try (DataOutputStream out =
                    new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(run), 1 << 16))) {
                for (int i = 0; i < size; i++) {
                    out.writeLong(buffer[i]);
                }
            }
            runs.add(run);
            size = 0;
        } catch (IOException e) {
            throw new UnavailableException(
                    "cannot spill case id fingerprints to a temporary file: " + e.getMessage()
                            + "; check the free space of " + System.getProperty("java.io.tmpdir"),
                    e);
        }
    }

    @Override
    public void close() {
        if (spillDir == null) {
            return;
        }
        try {
            for (Path run : runs) {
                Files.deleteIfExists(run);
            }
            Files.deleteIfExists(spillDir);
        } catch (IOException e) {
            // Temporary files only; the OS temp cleaner reclaims what is left.
        }
    }

    private static final class RunCursor implements AutoCloseable {
        private final DataInputStream in;
        long value;

        RunCursor(Path run) {
            try {
                this.in = new DataInputStream(new BufferedInputStream(Files.newInputStream(run), 1 << 16));
            } catch (IOException e) {
                throw new UnavailableException("cannot read spilled case id fingerprints: " + e.getMessage(), e);
            }
        }

        boolean advance() {
            try {
                value = in.readLong();
                return true;
            } catch (EOFException e) {
                return false;
            } catch (IOException e) {
                throw new UnavailableException("cannot read spilled case id fingerprints: " + e.getMessage(), e);
            }
        }

        @Override
        public void close() {
            try {
                in.close();
            } catch (IOException e) {
                // read-only temporary file
            }
        }
    }
}
