package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.concurrent.OrderedPipeline;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.List;

/**
 * Reading a {@code session.jsonl.zstd}: the published read path over its frames (pass 1, which also records the
 * per-frame metadata of the protocol rules) and the re-read of planned frames (pass 2). Frames are independent
 * once decompressed, so workers decode and index them in parallel while the calling thread applies the
 * sequential rules, in file order, to each frame's line summaries.
 */
final class ZstdLog {
    /** Batches in flight: enough to keep every worker busy while the reading thread consumes. */
    static final int WINDOW = 2 * PlainLog.THREADS + 2;

    /** Frames per batch, and the compressed bytes that close a batch early: a task is worth a thread hand-off. */
    static final int BATCH_FRAMES = 8;

    static final long BATCH_BYTES = 256 << 10;

    /** Consecutive frames decoded by one task, in order; slots are reused batch after batch. */
    static final class Batch {
        final FrameSlot[] slots = new FrameSlot[BATCH_FRAMES];
        int count;
        long bytes;

        Batch(boolean fast) {
            for (int i = 0; i < slots.length; i++) {
                slots[i] = new FrameSlot(fast);
            }
        }

        boolean full() {
            return count == slots.length || bytes >= BATCH_BYTES;
        }

        FrameSlot add(int ordinal, FrameScanner.Frame f) {
            FrameSlot s = slots[count++];
            s.ordinal = ordinal;
            s.frame = f;
            bytes += f.length();
            return s;
        }

        Batch run(FileChannel ch, FrameSlot.Contexts contexts, boolean describe) throws IOException {
            for (int i = 0; i < count; i++) {
                slots[i].run(ch, contexts, describe);
            }
            return this;
        }

        void clear() {
            count = 0;
            bytes = 0;
        }
    }

    private ZstdLog() {}

    /**
     * The published read path over the whole file. Header problems throw; everything else is recorded in
     * {@link LogReader.Pass#error} so frame metadata is still collected for the protocol rules.
     *
     * @param collect record per-frame metadata (pass 1); false for a re-read that only feeds {@code sink}
     */
    static LogReader.Pass pass1(Path file, FileChannel ch, long size, RowScanner.RowSink sink, boolean collect)
            throws IOException {
        LogReader.Pass p = new LogReader.Pass();
        FrameScanner sc = new FrameScanner(ch, size, 0);
        FrameScanner.Frame f0 = sc.next();
        if (f0 == null) {
            throw new CorruptSessionLogException(
                    "empty or header-less Zstandard session log (no complete zstd frame)", 0);
        }
        LogReader.Growable header = new LogReader.Growable(LogReader.MAX_FRAME_PLAINTEXT);
        try {
            FrameCodec.decodeComplete(FrameCodec.readRange(ch, f0.start(), f0.end()), header::write, new byte[1 << 16]);
        } catch (IOException e) {
            throw new CorruptSessionLogException(
                    "corrupt Zstandard session log: frame at byte 0 failed validation (" + e.getMessage() + ")", 0, e);
        }
        int nl = LineIndex.indexOf(header.buf, (byte) '\n', 0, header.len);
        if (header.len == 0 || nl != header.len - 1) {
            throw new CorruptSessionLogException(
                    "corrupt Zstandard session log: first frame is not exactly one header line", 0);
        }
        p.sessionId = HeaderScan.sessionId(header.buf, header.len);
        if (p.sessionId == null) {
            p.sessionId = EventRules.parseHeader(header.buf, 0, header.len - 1).id();
        }
        p.headerEnd = f0.end();
        p.completeEnd = f0.end();
        p.rows = new RowScanner(sink, p.sessionId, false);
        p.rows.surface().resolver(resolver(file, p.frames));
        boolean fast = sink == null;
        boolean bomb = false;
        CorruptSessionLogException structural = null;
        try (FrameSlot.Contexts contexts = new FrameSlot.Contexts();
                OrderedPipeline<Batch> workers = PlainLog.workers(WINDOW)) {
            ArrayDeque<Batch> free = new ArrayDeque<>();
            for (int i = 0; i < WINDOW; i++) {
                free.add(new Batch(fast));
            }
            int ordinal = 1;
            boolean more = true;
            consuming:
            for (; ; ) {
                while (more && !workers.full()) {
                    Batch b = free.poll();
                    b.clear();
                    while (!b.full()) {
                        FrameScanner.Frame f;
                        try {
                            f = sc.next();
                        } catch (CorruptSessionLogException e) {
                            structural = e;
                            more = false;
                            break;
                        }
                        if (f == null) {
                            more = false;
                            break;
                        }
                        b.add(ordinal++, f);
                    }
                    if (b.count == 0) {
                        free.add(b);
                        break;
                    }
                    workers.submit(() -> b.run(ch, contexts, collect));
                }
                if (workers.isEmpty()) {
                    break;
                }
                Batch b = workers.take();
                for (int i = 0; i < b.count; i++) {
                    bomb = consume(p, b.slots[i], ch, collect);
                    if (bomb) {
                        break consuming;
                    }
                }
                free.add(b);
            }
        }
        if (bomb) {
            return p; // like the published reader's failure: nothing after the frame counts
        }
        if (structural != null) {
            p.structural = structural;
            if (p.error == null) {
                p.error = structural;
            }
        } else {
            p.tornStart = sc.tornStart();
            p.fragmentStart = p.tornStart;
        }
        if (p.error == null && p.rows.committedBytes != p.rows.inputBytes) {
            p.error = p.rows.issue != null
                    ? p.rows.issue
                    : new CorruptSessionLogException(
                            "corrupt Zstandard session log: complete frame contains a torn JSONL record",
                            p.completeEnd);
        }
        if (p.error == null && p.tornStart >= 0) {
            byte[] rec =
                    FrameCodec.decodePrefix(FrameCodec.readRange(ch, p.tornStart, size), LogReader.MAX_TORN_PLAINTEXT);
            try {
                p.rows.beginFrame(p.tornStart, Long.MAX_VALUE);
                p.rows.write(rec, 0, rec.length);
            } catch (VigiloException e) {
                p.error = e;
            }
        }
        return p;
    }

    /** Applies one decoded frame in file order; @return true when a decompression bomb stops the read. */
    private static boolean consume(LogReader.Pass p, FrameSlot s, FileChannel ch, boolean collect) throws IOException {
        FrameScanner.Frame f = s.frame;
        p.completeEnd = f.end();
        LogReader.FrameMeta m = new LogReader.FrameMeta();
        m.start = f.start();
        m.end = f.end();
        m.checksum = s.checksum;
        m.ordinal = s.ordinal;
        if (collect) {
            p.frames.add(m); // before its rows: a replace in this frame may read back an event of it
        }
        if (s.tooBig && !decodeAlone(s, ch, collect)) {
            if (collect) {
                p.frames.remove(p.frames.size() - 1); // a bomb ends the read before this frame
            }
            if (p.error == null) {
                p.error = new CorruptSessionLogException(s.error + " (frame at byte " + f.start() + ")", f.start());
            }
            return true;
        }
        if (s.error != null) {
            if (p.error == null) {
                p.error = new CorruptSessionLogException(
                        "corrupt Zstandard session log: frame at byte " + f.start() + " failed validation (" + s.error
                                + ")",
                        f.start());
            }
        } else {
            m.intact = true;
            if (p.error == null) {
                try {
                    p.rows.beginFrame(f.start(), Long.MAX_VALUE);
                    p.rows.write(s.plain, s.plainLen, s.index, (long) s.ordinal << 32);
                } catch (VigiloException e) {
                    p.error = e;
                }
            }
            m.firstSeq = s.firstSeq;
            m.lastSeq = s.lastSeq;
            m.lines = s.lines;
            m.commitEpoch = s.commitEpoch;
        }
        if (s.plain.length > FrameSlot.PARALLEL_PLAINTEXT) {
            s.plain = new byte[1 << 17]; // do not keep a huge buffer
        }
        return false;
    }

    /**
     * Decodes a frame too large for the parallel budget alone, up to a quarter of the heap.
     *
     * @return false when it is larger still (a decompression bomb; {@link FrameSlot#error} says so)
     */
    private static boolean decodeAlone(FrameSlot s, FileChannel ch, boolean collect) throws IOException {
        LogReader.Growable g = new LogReader.Growable(LogReader.MAX_FRAME_PLAINTEXT);
        try {
            FrameCodec.decodeComplete(
                    FrameCodec.readRange(ch, s.frame.start(), s.frame.end()), g::write, new byte[1 << 16]);
        } catch (LogReader.TooLarge e) {
            s.error = e.getMessage();
            return false;
        } catch (IOException | RuntimeException e) {
            s.error = e.getMessage();
            s.tooBig = false;
            return true;
        }
        s.adopt(g.buf, g.len, collect);
        return true;
    }

    /** Pass 2: decodes {@code kept} (intact frames of pass 1, in order) into {@code rows}, cutting as planned. */
    static void pass2(FileChannel ch, List<LogReader.FrameMeta> frames, List<LogReader.FrameMeta> kept, RowScanner rows)
            throws IOException {
        boolean fast = rows.fast();
        try (FrameSlot.Contexts contexts = new FrameSlot.Contexts();
                OrderedPipeline<Batch> workers = PlainLog.workers(WINDOW)) {
            ArrayDeque<Batch> free = new ArrayDeque<>();
            for (int i = 0; i < WINDOW; i++) {
                free.add(new Batch(fast));
            }
            int next = 0;
            for (; ; ) {
                while (next < kept.size() && !workers.full()) {
                    Batch b = free.poll();
                    b.clear();
                    while (next < kept.size() && !b.full()) {
                        LogReader.FrameMeta m = kept.get(next++);
                        b.add(m.ordinal, new FrameScanner.Frame(m.start, m.end, m.checksum >= 0));
                    }
                    workers.submit(() -> b.run(ch, contexts, false));
                }
                if (workers.isEmpty()) {
                    break;
                }
                Batch b = workers.take();
                for (int i = 0; i < b.count; i++) {
                    FrameSlot s = b.slots[i];
                    if (s.tooBig && !decodeAlone(s, ch, false)) {
                        throw new CorruptSessionLogException(
                                s.error + " (frame at byte " + s.frame.start() + ")", s.frame.start());
                    }
                    if (s.error != null) {
                        throw new CorruptSessionLogException(
                                "corrupt Zstandard session log: frame at byte " + s.frame.start()
                                        + " failed validation in pass 2 (" + s.error + ")",
                                s.frame.start());
                    }
                    LogReader.FrameMeta m = frames.get(s.ordinal - 1);
                    rows.beginFrame(m.start, m.keepBelow);
                    rows.write(s.plain, s.plainLen, s.index, (long) s.ordinal << 32);
                    if (s.plain.length > FrameSlot.PARALLEL_PLAINTEXT) {
                        s.plain = new byte[1 << 17];
                    }
                    if (rows.issue != null) {
                        throw rows.issue;
                    }
                }
                free.add(b);
            }
        }
    }

    /**
     * Reads back an event the fast path folded: locator = frame ordinal (header = 0) in the high 32 bits, the
     * line's start in the frame's plaintext in the low 32 bits. Opens the file per call (a surface replace of
     * such an event is rare), so it stays usable after the read (a writer continues from the fold).
     */
    static SurfaceFold.Resolver resolver(Path file, List<LogReader.FrameMeta> frames) {
        return locator -> {
            LogReader.FrameMeta m = frames.get((int) (locator >>> 32) - 1);
            int lineStart = (int) locator;
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                LogReader.Growable g = new LogReader.Growable(LogReader.MAX_FRAME_PLAINTEXT);
                FrameCodec.decodeComplete(FrameCodec.readRange(ch, m.start, m.end), g::write, new byte[1 << 16]);
                int nl = LineIndex.indexOf(g.buf, (byte) '\n', lineStart, g.len);
                JsonNode e = Json.parseLine(g.buf, lineStart, nl - lineStart);
                if (e == null) {
                    throw new IOException("the event at " + Long.toHexString(locator) + " changed");
                }
                return e;
            } catch (IOException e) {
                throw new UnavailableException(
                        "cannot re-read " + file + " (it changed while being read?): " + e.getMessage(), e);
            }
        };
    }
}
