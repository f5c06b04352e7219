package dev.vigilo.exec.view;

import dev.vigilo.common.errors.UnavailableException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;

/**
 * Sorts a stream of {@link CaseOutcome}s by case id in bounded memory: records are collected up to a byte budget,
 * sorted and written to a run file in a scratch directory; at the end the run files are merged ({@value #FAN_IN} at a
 * time, in passes when there are more). A stream that fits the budget is sorted in memory and writes nothing.
 *
 * <p>Memory: the budget's worth of records while sorting, then one record and one 64 KiB buffer per merged run file.
 * Run files are deleted by {@link #close}. Ids compare as Java strings (UTF-16 code units). Not thread-safe.
 */
final class ExternalIdSort implements Iterator<CaseOutcome>, AutoCloseable {
    /** Default bytes of records held before a run file is written. */
    static final long DEFAULT_BUDGET = 8L << 20;
    /** Run files merged at once. */
    static final int FAN_IN = 64;

    private static final int BUFFER = 64 << 10;
    private static final Comparator<CaseOutcome> BY_ID = Comparator.comparing(CaseOutcome::id);

    private final Path dir;
    private final List<Path> files = new ArrayList<>();
    private final List<DataInputStream> open = new ArrayList<>();
    private Iterator<CaseOutcome> memory;
    private PriorityQueue<Head> heads;
    private int spilled;

    /** One run file's current record. */
    private record Head(CaseOutcome record, DataInputStream in) {}

    private ExternalIdSort(Path dir) {
        this.dir = dir;
    }

    /**
     * Sorts {@code in} (consumed completely).
     *
     * @param dir    an existing scratch directory for run files
     * @param budget bytes of records held in memory at once
     * @throws UnavailableException when the scratch directory fails
     */
    static ExternalIdSort sort(Iterator<CaseOutcome> in, Path dir, long budget) {
        ExternalIdSort s = new ExternalIdSort(dir);
        try {
            List<CaseOutcome> buffer = new ArrayList<>();
            long weight = 0;
            while (in.hasNext()) {
                CaseOutcome c = in.next();
                buffer.add(c);
                weight += c.weight();
                if (weight >= budget) {
                    s.spill(buffer);
                    buffer = new ArrayList<>();
                    weight = 0;
                }
            }
            buffer.sort(BY_ID);
            if (s.files.isEmpty()) {
                s.memory = buffer.iterator();
                return s;
            }
            if (!buffer.isEmpty()) {
                s.spill(buffer);
            }
            while (s.files.size() > FAN_IN) {
                List<Path> group = new ArrayList<>(s.files.subList(0, FAN_IN));
                s.files.subList(0, FAN_IN).clear();
                s.files.add(s.mergeToFile(group));
            }
            s.heads = s.openHeads(s.files);
            return s;
        } catch (IOException e) {
            s.close();
            throw new UnavailableException(
                    "cannot sort cases by id in " + dir + ": " + e.getMessage()
                            + "; check the temporary directory's free space",
                    e);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /** Run files written (0 when the stream fitted in memory). */
    int spilled() {
        return spilled;
    }

    private void spill(List<CaseOutcome> buffer) throws IOException {
        buffer.sort(BY_ID);
        Path f = Files.createTempFile(dir, "run-", ".bin"); // unique: several sorts may share the directory
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(f), BUFFER))) {
            for (CaseOutcome c : buffer) {
                c.write(out);
            }
        }
        files.add(f);
        spilled++;
    }

    private Path mergeToFile(List<Path> group) throws IOException {
        Path f = Files.createTempFile(dir, "merged-", ".bin");
        spilled++;
        PriorityQueue<Head> q = openHeads(group);
        try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(f), BUFFER))) {
            while (!q.isEmpty()) {
                Head h = q.poll();
                h.record().write(out);
                advance(q, h.in());
            }
        }
        for (Path p : group) {
            Files.deleteIfExists(p);
        }
        return f;
    }

    private PriorityQueue<Head> openHeads(List<Path> runs) throws IOException {
        PriorityQueue<Head> q =
                new PriorityQueue<>(Math.max(1, runs.size()), (a, b) -> BY_ID.compare(a.record(), b.record()));
        for (Path p : runs) {
            DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(p), BUFFER));
            open.add(in);
            advance(q, in);
        }
        return q;
    }

    private static void advance(PriorityQueue<Head> q, DataInputStream in) throws IOException {
        CaseOutcome next = CaseOutcome.read(in);
        if (next != null) {
            q.add(new Head(next, in));
        } else {
            in.close();
        }
    }

    @Override
    public boolean hasNext() {
        return memory != null ? memory.hasNext() : heads != null && !heads.isEmpty();
    }

    @Override
    public CaseOutcome next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        if (memory != null) {
            return memory.next();
        }
        Head h = heads.poll();
        try {
            advance(heads, h.in());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read a sorted run file in " + dir + ": " + e.getMessage(), e);
        }
        return h.record();
    }

    /** Closes and deletes the run files. Idempotent. */
    @Override
    public void close() {
        for (DataInputStream in : open) {
            try {
                in.close();
            } catch (IOException e) {
                // deleting follows
            }
        }
        open.clear();
        for (Path p : files) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                // the scratch directory is removed by its owner
            }
        }
        memory = null;
        heads = null;
    }
}
