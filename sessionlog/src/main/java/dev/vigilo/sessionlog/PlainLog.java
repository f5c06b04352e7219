package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.concurrent.OrderedPipeline;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Reading an uncompressed {@code session.jsonl} as the published reader's scanLog does: the first line is the
 * header, every later newline-terminated line a record, a final line without newline a torn tail; the first
 * unparsable record or seq gap ends the committed prefix (a later turn/end throws it) and everything after the
 * prefix is the torn tail ({@code truncateTo}). The file is read in blocks cut at newlines; workers index the
 * blocks' lines in parallel while the calling thread applies the sequential rules.
 * <p>Protocol units: an uncompressed log has no frames, so the protocol's unit is a stretch of lines ending at a
 * commit record line (P1), at an offset the manifest names (an epoch start or its committed end, P2), or at the
 * end of the last complete line.
 */
final class PlainLog {
    static final int BLOCK = 1 << 20;
    /** Worker threads: the machine's processors (the reading thread does little while they work), at most 8. */
    static final int THREADS = OrderedPipeline.processorsUpTo(8);

    static final int WINDOW = 2 * THREADS + 2;
    private static final byte[] COMMIT_HINT = "commit".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private PlainLog() {}

    /** Whole lines of the file read in order, each block ending at a newline. */
    private static final class Block {
        byte[] buf = new byte[BLOCK + (BLOCK >> 2)];
        int len;
        long offset;
        final LineIndex index;

        Block(boolean fast) {
            index = new LineIndex(fast);
        }

        Block run() {
            index.index(buf, len);
            return this;
        }
    }

    /** Cuts [from, to) of the file into blocks of whole lines; what follows the last newline is the fragment. */
    private static final class Blocks {
        private final FileChannel ch;
        private long pos;
        private final long to;
        private byte[] carry = new byte[1 << 12];
        private int carryLen;

        Blocks(FileChannel ch, long from, long to) {
            this.ch = ch;
            this.pos = from;
            this.to = to;
        }

        /** @return false at the end (no newline left): {@link #fragment} holds the rest */
        boolean next(Block b) throws IOException {
            if (b.buf.length < carryLen + BLOCK) {
                b.buf = new byte[carryLen + BLOCK];
            }
            System.arraycopy(carry, 0, b.buf, 0, carryLen);
            int n = carryLen;
            long start = pos - carryLen;
            for (; ; ) {
                int want = (int) Math.min(b.buf.length - n, to - pos);
                int got = read(b.buf, n, want, pos);
                n += got;
                pos += got;
                int nl = n - 1;
                while (nl >= 0 && b.buf[nl] != '\n') {
                    nl--;
                }
                if (nl >= 0) {
                    b.offset = start;
                    b.len = nl + 1;
                    keep(b.buf, b.len, n - b.len);
                    return true;
                }
                if (pos >= to) {
                    keep(b.buf, 0, n);
                    return false;
                }
                if (b.buf.length >= LogReader.MAX_FRAME_PLAINTEXT) {
                    throw new CorruptSessionLogException(
                            "a line at byte " + start + " is longer than " + LogReader.MAX_FRAME_PLAINTEXT
                                    + " bytes, a quarter of this JVM's heap; raise -Xmx to read it",
                            start);
                }
                b.buf = Arrays.copyOf(b.buf, (int) Math.min(LogReader.MAX_FRAME_PLAINTEXT, b.buf.length * 2L));
            }
        }

        private void keep(byte[] b, int off, int len) {
            if (carry.length < len) {
                carry = new byte[Math.max(len, carry.length * 2)];
            }
            System.arraycopy(b, off, carry, 0, len);
            carryLen = len;
        }

        private int read(byte[] b, int off, int len, long at) throws IOException {
            ByteBuffer bb = ByteBuffer.wrap(b, off, len);
            while (bb.hasRemaining()) {
                int r = ch.read(bb, at + bb.position() - off);
                if (r < 0) {
                    throw new IOException("file shrank while reading at byte " + (at + bb.position() - off));
                }
            }
            return len;
        }

        byte[] fragment() {
            return Arrays.copyOf(carry, carryLen);
        }
    }

    /** Runs {@code blocks} through the workers, handing each indexed block to {@code sink} in order. */
    private interface BlockSink {
        void accept(Block b) throws IOException;
    }

    /**
     * The pipeline of a reading pass: at most {@code window} independent tasks (decoding and indexing one chunk each)
     * in flight, which bounds the memory of their buffers, on at most {@link #THREADS} daemon threads.
     */
    static <T> OrderedPipeline<T> workers(int window) {
        return new OrderedPipeline<>(
                "sessionlog-read",
                Math.min(THREADS, window),
                window,
                Long.MAX_VALUE,
                "interrupted while reading the session log");
    }

    private static void forEachBlock(Blocks blocks, boolean fast, BlockSink sink) throws IOException {
        try (OrderedPipeline<Block> workers = workers(WINDOW)) {
            ArrayDeque<Block> free = new ArrayDeque<>();
            for (int i = 0; i < WINDOW; i++) {
                free.add(new Block(fast));
            }
            boolean more = true;
            for (; ; ) {
                while (more && !workers.full()) {
                    Block b = free.poll();
                    if (!blocks.next(b)) {
                        free.add(b);
                        more = false;
                        break;
                    }
                    workers.submit(b::run);
                }
                if (workers.isEmpty()) {
                    break;
                }
                Block b = workers.take();
                sink.accept(b);
                if (b.buf.length > 4 * BLOCK) {
                    b.buf = new byte[BLOCK + (BLOCK >> 2)]; // do not keep a huge line's buffer
                }
                free.add(b);
            }
        }
    }

    /**
     * Pass 1: the published read path over the whole file, plus the protocol units when {@code collect}.
     *
     * @param splits ascending file offsets where a unit must end (the manifest's epoch starts and committed end)
     */
    static LogReader.Pass pass1(
            Path file, FileChannel ch, long size, RowScanner.RowSink sink, long[] splits, boolean collect)
            throws IOException {
        LogReader.Pass p = new LogReader.Pass();
        byte[] header = headerLine(ch, size);
        p.sessionId = HeaderScan.sessionId(header, header.length);
        if (p.sessionId == null) {
            p.sessionId = EventRules.parseHeader(header, 0, header.length - 1).id();
        }
        p.headerEnd = header.length;
        p.completeEnd = header.length;
        p.lineCount = 1;
        p.rows = new RowScanner(sink, p.sessionId, true);
        p.rows.startAt(p.headerEnd);
        p.rows.surface().resolver(resolver(file));
        Units units = collect ? new Units(p, file, splits) : null;
        Blocks blocks = new Blocks(ch, p.headerEnd, size);
        try {
            forEachBlock(blocks, sink == null, b -> {
                p.completeEnd = b.offset + b.len;
                p.lineCount += b.index.lines;
                if (p.error == null) {
                    try {
                        p.rows.write(b.buf, b.len, b.index, b.offset);
                    } catch (VigiloException e) {
                        p.error = e;
                    }
                }
                if (units != null) {
                    units.observe(b);
                }
            });
        } catch (CorruptSessionLogException e) { // a line longer than the heap allows
            if (p.error == null) {
                p.error = e;
            }
            return p;
        }
        if (units != null) {
            units.finish(ch);
        }
        byte[] fragment = blocks.fragment();
        if (p.error == null && fragment.length > 0) {
            p.rows.write(fragment, 0, fragment.length);
        }
        long truncateTo = p.error == null ? p.rows.committedBytes : p.completeEnd;
        p.tornStart = truncateTo < size ? truncateTo : -1;
        p.fragmentStart = p.completeEnd < size ? p.completeEnd : -1;
        return p;
    }

    /** Reads the first line (with its newline); none -> the published reader's "empty or header-less session log". */
    private static byte[] headerLine(FileChannel ch, long size) throws IOException {
        byte[] buf = new byte[1 << 14];
        int n = 0;
        for (; ; ) {
            int nl = LineIndex.indexOf(buf, (byte) '\n', 0, n);
            if (nl >= 0) {
                return Arrays.copyOf(buf, nl + 1);
            }
            if (n >= size) {
                throw new CorruptSessionLogException(
                        "empty or header-less session log (no newline-terminated first line)", 0);
            }
            if (n == buf.length) {
                if (buf.length >= LogReader.MAX_FRAME_PLAINTEXT) {
                    throw new CorruptSessionLogException(
                            "corrupt session log: the first line is longer than " + LogReader.MAX_FRAME_PLAINTEXT
                                    + " bytes without a newline; raise -Xmx to read it",
                            0);
                }
                buf = Arrays.copyOf(buf, (int) Math.min(LogReader.MAX_FRAME_PLAINTEXT, buf.length * 2L));
            }
            ByteBuffer bb = ByteBuffer.wrap(buf, n, (int) Math.min(buf.length - n, size - n));
            int r = ch.read(bb, n);
            if (r < 0) {
                throw new CorruptSessionLogException("empty or header-less session log", 0);
            }
            n += r;
        }
    }

    /** Pass 2: re-reads the planned units into {@code rows}, cutting as planned. */
    static void pass2(FileChannel ch, List<LogReader.FrameMeta> kept, RowScanner rows) throws IOException {
        for (LogReader.FrameMeta m : kept) {
            rows.startAt(m.start);
            rows.beginFrame(m.start, m.keepBelow);
            Blocks blocks = new Blocks(ch, m.start, m.end);
            forEachBlock(blocks, rows.fast(), b -> {
                rows.write(b.buf, b.len, b.index, b.offset);
                if (rows.issue != null) {
                    throw rows.issue;
                }
            });
            byte[] fragment = blocks.fragment();
            if (fragment.length > 0) {
                rows.write(fragment, 0, fragment.length);
            }
            if (rows.issue != null) {
                throw rows.issue;
            }
        }
    }

    /** Reads back an event the fast path folded: locator = file offset of its line. */
    static SurfaceFold.Resolver resolver(Path file) {
        return locator -> {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                byte[] line = lineAt(ch, locator);
                JsonNode e = Json.parseLine(line, 0, line.length);
                if (e == null) {
                    throw new IOException("the event at byte " + locator + " changed");
                }
                return e;
            } catch (IOException e) {
                throw new UnavailableException(
                        "cannot re-read " + file + " (it changed while being read?): " + e.getMessage(), e);
            }
        };
    }

    /** @return the line starting at {@code offset}, without its newline */
    static byte[] lineAt(FileChannel ch, long offset) throws IOException {
        byte[] buf = new byte[1 << 14];
        int n = 0;
        for (; ; ) {
            if (n == buf.length) {
                buf = Arrays.copyOf(buf, buf.length * 2);
            }
            int r = ch.read(ByteBuffer.wrap(buf, n, buf.length - n), offset + n);
            int from = n;
            if (r > 0) {
                n += r;
            }
            int nl = LineIndex.indexOf(buf, (byte) '\n', from, n);
            if (nl >= 0) {
                return Arrays.copyOf(buf, nl);
            }
            if (r < 0) {
                return Arrays.copyOf(buf, n);
            }
        }
    }

    /** CRC-32C of a line with its newline: what a P2 manifest of an uncompressed log names as its last line's checksum. */
    static long lineChecksum(byte[] b, int off, int lenWithNewline) {
        CRC32C c = new CRC32C();
        c.update(b, off, lenWithNewline);
        return c.getValue();
    }

    /** Builds the protocol units of pass 1 line by line. */
    private static final class Units {
        private final LogReader.Pass p;
        private final long[] splits;
        private int nextSplit;
        private LogReader.FrameMeta unit;
        private long lines;
        /** the last complete line seen: start offset, and its last seq when known without parsing */
        private long lastStart = -1, lastEnd, lastSeq = -1;

        Units(LogReader.Pass p, Path file, long[] splits) {
            this.p = p;
            this.splits = splits;
        }

        void observe(Block b) {
            LineIndex x = b.index;
            for (int i = 0; i < x.lines; i++) {
                int s = x.lineStart[i], e = x.lineEnd[i];
                long start = b.offset + s, end = b.offset + e + 1;
                lines++;
                JsonNode parsed = null;
                boolean fast = x.kind[i] != EventKinds.SLOW;
                if (unit == null) {
                    unit = new LogReader.FrameMeta();
                    unit.start = start;
                    unit.intact = true;
                    if (fast) {
                        unit.firstSeq = x.seq[i];
                    } else {
                        parsed = Json.parseLine(b.buf, s, e - s);
                        long[] r = LogReader.seqRange(parsed);
                        if (r != null) {
                            unit.firstSeq = r[0];
                        }
                    }
                }
                unit.lines++;
                long epoch = -1, commitSeq = -1;
                if (fast) {
                    epoch = x.commitEpoch[i];
                    commitSeq = x.seq[i];
                } else if (contains(b.buf, s, e, COMMIT_HINT) || contains(b.buf, s, e, UNICODE_ESCAPE)) {
                    if (parsed == null) {
                        parsed = Json.parseLine(b.buf, s, e - s);
                    }
                    CommitRecord c = LogReader.commitOf(parsed);
                    if (c != null) {
                        epoch = c.epoch().value();
                        commitSeq = c.endSeq().value();
                    }
                }
                while (nextSplit < splits.length && splits[nextSplit] < end) {
                    nextSplit++;
                }
                boolean split = nextSplit < splits.length && splits[nextSplit] == end;
                if (epoch >= 0) {
                    unit.lastSeq = commitSeq;
                    unit.commitEpoch = new Epoch(epoch);
                    close(end, lineChecksum(b.buf, s, e - s + 1));
                } else if (split) {
                    if (fast) {
                        unit.lastSeq = x.seq[i];
                    } else {
                        if (parsed == null) {
                            parsed = Json.parseLine(b.buf, s, e - s);
                        }
                        long[] r = LogReader.seqRange(parsed);
                        if (r != null) {
                            unit.lastSeq = r[1];
                        }
                    }
                    close(end, lineChecksum(b.buf, s, e - s + 1));
                } else {
                    lastStart = start;
                    lastEnd = end;
                    lastSeq = fast ? x.seq[i] : -1;
                }
            }
        }

        private static final byte[] UNICODE_ESCAPE = {'\\', 'u'};

        private static boolean contains(byte[] b, int from, int to, byte[] needle) {
            outer:
            for (int i = from; i <= to - needle.length; i++) {
                for (int j = 0; j < needle.length; j++) {
                    if (b[i + j] != needle[j]) {
                        continue outer;
                    }
                }
                return true;
            }
            return false;
        }

        private void close(long end, long checksum) {
            unit.end = end;
            unit.checksum = checksum;
            unit.cumulativeLines = lines;
            unit.ordinal = p.frames.size() + 1;
            p.frames.add(unit);
            unit = null;
        }

        /** Closes the open unit at the last complete line. */
        void finish(FileChannel ch) throws IOException {
            if (unit == null) {
                return;
            }
            if (lastSeq >= 0) {
                unit.lastSeq = lastSeq;
            } else {
                byte[] line = lineAt(ch, lastStart);
                long[] r = LogReader.seqRange(Json.parseLine(line, 0, line.length));
                if (r != null) {
                    unit.lastSeq = r[1];
                }
            }
            close(lastEnd, -1);
        }
    }
}
