package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One complete zstd frame on its way through a worker: its compressed bytes, its plaintext, its line index and
 * the per-frame metadata the protocol rules need. Slots are reused frame after frame (a bounded pool), so the
 * hot path allocates nothing per frame.
 */
final class FrameSlot {
    /** Plaintext a frame decoded in parallel may have; a larger frame is decoded alone (see {@link #tooBig}). */
    static final long PARALLEL_PLAINTEXT = Math.max(1 << 20, LogReader.MAX_FRAME_PLAINTEXT / 4);

    /**
     * Largest window one-shot decoding accepts as the streaming decoder does (zstd's default window-log limit of
     * 27): a frame asking for more, a single-segment frame or one naming a dictionary is decoded by streaming.
     */
    private static final long MAX_WINDOW = 1L << 27;

    // input
    int ordinal;
    FrameScanner.Frame frame;
    // output
    byte[] plain = new byte[1 << 17];
    int plainLen;
    /** null when the frame decoded with a valid checksum; else why it failed validation */
    String error;
    /** the plaintext is larger than {@link #PARALLEL_PLAINTEXT}: the reading thread decodes it alone */
    boolean tooBig;

    long checksum = -1;
    long firstSeq = -1, lastSeq = -1, lines;
    Epoch commitEpoch;
    final LineIndex index;

    private byte[] comp = new byte[1 << 16];

    FrameSlot(boolean fast) {
        this.index = new LineIndex(fast);
    }

    /** Shared decompression contexts, one per worker thread at most (each holds native memory). */
    static final class Contexts implements AutoCloseable {
        private final ConcurrentLinkedQueue<ZstdDecompressCtx> free = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<ZstdDecompressCtx> all = new ConcurrentLinkedQueue<>();

        ZstdDecompressCtx take() {
            ZstdNative.ensureLoaded();
            ZstdDecompressCtx c = free.poll();
            if (c == null) {
                c = new ZstdDecompressCtx();
                all.add(c);
            }
            return c;
        }

        void give(ZstdDecompressCtx c) {
            free.add(c);
        }

        @Override
        public void close() {
            for (ZstdDecompressCtx c : all) {
                c.close();
            }
        }
    }

    /** Reads, decodes and indexes {@link #frame}; with {@code describe} also fills the per-frame metadata. */
    FrameSlot run(FileChannel ch, Contexts contexts, boolean describe) throws IOException {
        error = null;
        tooBig = false;
        plainLen = 0;
        index.lines = 0;
        index.tail = 0;
        firstSeq = lastSeq = -1;
        lines = 0;
        commitEpoch = null;
        int n = (int) frame.length();
        if (comp.length < n) {
            comp = new byte[Math.max(n, comp.length * 2)];
        }
        ByteBuffer bb = ByteBuffer.wrap(comp, 0, n);
        while (bb.hasRemaining()) {
            if (ch.read(bb, frame.start() + bb.position()) < 0) {
                throw new IOException("file shrank while reading frame at " + frame.start());
            }
        }
        checksum = frame.checksum()
                ? ((comp[n - 4] & 0xffL)
                        | (comp[n - 3] & 0xffL) << 8
                        | (comp[n - 2] & 0xffL) << 16
                        | (comp[n - 1] & 0xffL) << 24)
                : -1;
        decode(n, contexts);
        if (error == null && !tooBig) {
            index.index(plain, plainLen);
            if (describe) {
                describe();
            }
        }
        return this;
    }

    /** Takes {@code buf[0, len)}, decoded by the caller, as this frame's plaintext. */
    void adopt(byte[] buf, int len, boolean describe) {
        plain = buf;
        plainLen = len;
        tooBig = false;
        index.index(plain, plainLen);
        if (describe) {
            describe();
        }
    }

    private boolean oneShot(int n) {
        int d = comp[4] & 0xff;
        if ((d & 0x20) != 0 || (d & 3) != 0 || n < 6) {
            return false;
        }
        int w = comp[5] & 0xff;
        long base = 1L << (10 + (w >>> 3));
        return base + (base / 8) * (w & 7) <= MAX_WINDOW;
    }

    private void decode(int n, Contexts contexts) {
        if (!oneShot(n)) {
            LogReader.Growable g = new LogReader.Growable(PARALLEL_PLAINTEXT);
            try {
                FrameCodec.decodeComplete(java.util.Arrays.copyOf(comp, n), g::write, new byte[1 << 16]);
            } catch (IOException | RuntimeException e) {
                if (e instanceof LogReader.TooLarge) {
                    tooBig = true;
                } else {
                    error = e.getMessage();
                }
                return;
            }
            plain = g.buf;
            plainLen = g.len;
            return;
        }
        ZstdDecompressCtx ctx = contexts.take();
        try {
            for (; ; ) {
                try {
                    plainLen = ctx.decompressByteArray(plain, 0, plain.length, comp, 0, n);
                    return;
                } catch (ZstdException e) {
                    if (e.getErrorCode() != Zstd.errDstSizeTooSmall()) {
                        error = e.getMessage();
                        return;
                    }
                    if (plain.length >= PARALLEL_PLAINTEXT) {
                        tooBig = true;
                        return;
                    }
                    plain = new byte[(int) Math.min(PARALLEL_PLAINTEXT, (long) plain.length * 2)];
                    ctx.reset();
                }
            }
        } finally {
            contexts.give(ctx);
        }
    }

    /** Frame-local metadata: first seq, last seq, commit record (the last line), line count. */
    private void describe() {
        LineIndex x = index;
        if (x.lines == 0) {
            return;
        }
        if (x.kind[0] != EventKinds.SLOW) {
            firstSeq = x.seq[0];
        } else {
            long[] r = LogReader.seqRange(Json.parseLine(plain, 0, x.lineEnd[0]));
            if (r != null) {
                firstSeq = r[0];
            }
        }
        int l = x.lines - 1;
        if (x.kind[l] != EventKinds.SLOW) {
            lastSeq = x.seq[l];
            if (x.commitEpoch[l] >= 0) {
                commitEpoch = new Epoch(x.commitEpoch[l]);
            }
        } else {
            JsonNode last = Json.parseLine(plain, x.lineStart[l], x.lineEnd[l] - x.lineStart[l]);
            long[] r = LogReader.seqRange(last);
            if (r != null) {
                lastSeq = r[1];
            }
            CommitRecord c = LogReader.commitOf(last);
            if (c != null && c.endSeq().value() == lastSeq) {
                commitEpoch = c.epoch();
            }
        }
        if (firstSeq < 0 || lastSeq < firstSeq) {
            lines = x.lines;
        }
    }
}
