package dev.vigilo.dataset;

import dev.vigilo.storage.Sha256;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;

/**
 * Finds repeated case ids in bounded memory, however many cases a file has.
 *
 * <p>Each id is reduced to the first 128 bits of its SHA-256 and kept with its line number. Entries accumulate in a
 * fixed-size buffer; a full buffer is sorted and spilled as a run to a temporary file; {@link #firstDuplicate()}
 * merges the runs. Equal 128-bit prefixes are treated as a duplicate candidate; the caller confirms the ids by
 * re-reading both lines (a collision of truncated SHA-256 is not expected in practice, and a confirmed check keeps
 * the error honest). Memory: {@code 24 * bufferEntries} bytes. Not thread-safe.
 */
final class DuplicateIdDetector implements AutoCloseable {
    /** Two lines whose ids hash alike; {@code first < second}. */
    record Candidate(long firstLine, long secondLine) {
    }

    private final int bufferEntries;
    private final long[] hi;
    private final long[] lo;
    private final long[] lines;
    private int size;
    private final List<Path> runs = new ArrayList<>();
    private Path spillDir;
    private final MessageDigest digest = Sha256.newDigest();

    DuplicateIdDetector(int bufferEntries) {
        this.bufferEntries = bufferEntries;
        this.hi = new long[bufferEntries];
        this.lo = new long[bufferEntries];
        this.lines = new long[bufferEntries];
    }

    void add(String id, long line) {
        byte[] d = digest.digest(id.getBytes(StandardCharsets.UTF_8));
        ByteBuffer b = ByteBuffer.wrap(d);
        if (size == bufferEntries) {
            spill();
        }
        hi[size] = b.getLong();
        lo[size] = b.getLong();
        lines[size] = line;
        size++;
    }

    /**
     * The duplicate candidate whose second occurrence comes earliest in the file, if any. Consumes the detector.
     */
    Optional<Candidate> firstDuplicate() {
        if (runs.isEmpty()) {
            Integer[] order = sortedOrder();
            return scan(new ArrayCursor(order));
        }
        if (size > 0) {
            spill();
        }
        List<RunCursor> cursors = new ArrayList<>();
        try {
            for (Path run : runs) {
                cursors.add(new RunCursor(run));
            }
            return scan(new MergeCursor(cursors));
        } finally {
            for (RunCursor c : cursors) {
                c.close();
            }
        }
    }

    private Optional<Candidate> scan(EntryCursor cursor) {
        Candidate best = null;
        boolean havePrev = false;
        long prevHi = 0;
        long prevLo = 0;
        long groupFirstLine = 0;
        while (cursor.advance()) {
            if (havePrev && cursor.hi() == prevHi && cursor.lo() == prevLo) {
                // Entries with one hash arrive in line order, so the group's first line is the original.
                if (best == null || cursor.line() < best.secondLine()) {
                    best = new Candidate(groupFirstLine, cursor.line());
                }
            } else {
                groupFirstLine = cursor.line();
            }
            havePrev = true;
            prevHi = cursor.hi();
            prevLo = cursor.lo();
        }
        return Optional.ofNullable(best);
    }

    private Integer[] sortedOrder() {
        Integer[] order = new Integer[size];
        for (int i = 0; i < size; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> {
            int c = Long.compareUnsigned(hi[a], hi[b]);
            if (c != 0) {
                return c;
            }
            c = Long.compareUnsigned(lo[a], lo[b]);
            return c != 0 ? c : Long.compare(lines[a], lines[b]);
        });
        return order;
    }

    private void spill() {
        Integer[] order = sortedOrder();
        try {
            if (spillDir == null) {
                spillDir = Files.createTempDirectory("vigilo-ids-");
            }
            Path run = spillDir.resolve("run-" + runs.size());
            try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(run), 1 << 16))) {
                for (int i : order) {
                    out.writeLong(hi[i]);
                    out.writeLong(lo[i]);
                    out.writeLong(lines[i]);
                }
            }
            runs.add(run);
            size = 0;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot spill case ids to a temporary file", e);
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

    private interface EntryCursor {
        boolean advance();

        long hi();

        long lo();

        long line();
    }

    private final class ArrayCursor implements EntryCursor {
        private final Integer[] order;
        private int pos = -1;

        ArrayCursor(Integer[] order) {
            this.order = order;
        }

        @Override
        public boolean advance() {
            return ++pos < order.length;
        }

        @Override
        public long hi() {
            return hi[order[pos]];
        }

        @Override
        public long lo() {
            return lo[order[pos]];
        }

        @Override
        public long line() {
            return lines[order[pos]];
        }
    }

    private static final class RunCursor implements EntryCursor, AutoCloseable {
        private final DataInputStream in;
        private long hi;
        private long lo;
        private long line;

        RunCursor(Path run) {
            try {
                this.in = new DataInputStream(new BufferedInputStream(Files.newInputStream(run), 1 << 16));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public boolean advance() {
            try {
                hi = in.readLong();
                lo = in.readLong();
                line = in.readLong();
                return true;
            } catch (EOFException e) {
                return false;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public long hi() {
            return hi;
        }

        @Override
        public long lo() {
            return lo;
        }

        @Override
        public long line() {
            return line;
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

    private static final class MergeCursor implements EntryCursor {
        private final PriorityQueue<RunCursor> heap = new PriorityQueue<>((a, b) -> {
            int c = Long.compareUnsigned(a.hi(), b.hi());
            if (c != 0) {
                return c;
            }
            c = Long.compareUnsigned(a.lo(), b.lo());
            return c != 0 ? c : Long.compare(a.line(), b.line());
        });
        private RunCursor current;

        MergeCursor(List<RunCursor> cursors) {
            for (RunCursor c : cursors) {
                if (c.advance()) {
                    heap.add(c);
                }
            }
        }

        @Override
        public boolean advance() {
            if (current != null && current.advance()) {
                heap.add(current);
            }
            current = heap.poll();
            return current != null;
        }

        @Override
        public long hi() {
            return current.hi();
        }

        @Override
        public long lo() {
            return current.lo();
        }

        @Override
        public long line() {
            return current.line();
        }
    }
}
