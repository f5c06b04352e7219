package dev.vigilo.sessionlog;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;

/**
 * Structural walk over a concatenation of zstd frames (magic, descriptor, header, blocks, optional checksum),
 * exactly as the published reader's scanZstdFrames: EOF inside a frame (or fewer than 4 trailing bytes) marks
 * a torn start; a bad magic, reserved descriptor bits or a reserved block type throw. Reads through a small
 * window so a multi-GB file needs O(1) memory.
 */
final class FrameScanner {
    static final int MAGIC = 0xFD2FB528;

    /** One structurally complete frame [start, end). */
    record Frame(long start, long end, boolean checksum) {
        long length() {
            return end - start;
        }
    }

    private final FileChannel ch;
    private final long size;
    private long pos;
    private long tornStart = -1;
    // small: only frame and block headers are read here (the frames themselves are read by whoever decodes them)
    private final ByteBuffer win = ByteBuffer.allocate(1 << 12).order(ByteOrder.LITTLE_ENDIAN);
    private long winStart = 0;
    private int winLen = 0;

    FrameScanner(FileChannel ch, long size, long startAt) {
        this.ch = ch;
        this.size = size;
        this.pos = startAt;
    }

    /** @return offset of an incomplete final frame, or -1 */
    long tornStart() {
        return tornStart;
    }

    long size() {
        return size;
    }

    private int byteAt(long p) throws IOException {
        if (p < winStart || p >= winStart + winLen) {
            win.clear();
            winStart = p;
            int n = 0;
            while (win.hasRemaining()) {
                int r = ch.read(win, p + n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
            winLen = n;
            if (n == 0) {
                throw new IOException("unexpected end of file at " + p);
            }
        }
        return win.get((int) (p - winStart)) & 0xff;
    }

    private long le(long p, int bytes) throws IOException {
        long v = 0;
        for (int i = 0; i < bytes; i++) {
            v |= ((long) byteAt(p + i)) << (8 * i);
        }
        return v;
    }

    /**
     * @return the next complete frame, or null at the end (check {@link #tornStart()})
     * @throws CorruptSessionLogException on bad magic, reserved descriptor bits or reserved block type
     */
    Frame next() throws IOException {
        if (pos >= size || tornStart >= 0) {
            return null;
        }
        long start = pos;
        long off = pos;
        if (size - off < 4) {
            return torn(start);
        }
        if ((int) le(off, 4) != MAGIC) {
            throw new CorruptSessionLogException(
                    "corrupt Zstandard session log: invalid frame magic at byte " + off, off);
        }
        off += 4;
        if (off == size) {
            return torn(start);
        }
        int descriptor = byteAt(off);
        off += 1;
        if ((descriptor & 0x18) != 0) {
            throw new CorruptSessionLogException(
                    "corrupt Zstandard session log: reserved frame-header bit at byte " + (off - 1), off - 1);
        }
        int contentSizeFlag = descriptor >>> 6;
        boolean singleSegment = (descriptor & 0x20) != 0;
        boolean checksum = (descriptor & 0x04) != 0;
        int dictFlag = descriptor & 3;
        int dictBytes = dictFlag == 3 ? 4 : dictFlag;
        int csBytes = contentSizeFlag == 0 ? (singleSegment ? 1 : 0) : 1 << contentSizeFlag;
        int rest = (singleSegment ? 0 : 1) + dictBytes + csBytes;
        if (size - off < rest) {
            return torn(start);
        }
        off += rest;
        for (; ; ) {
            if (size - off < 3) {
                return torn(start);
            }
            long bh = le(off, 3);
            off += 3;
            boolean last = (bh & 1) != 0;
            int type = (int) ((bh >>> 1) & 3);
            long blockSize = bh >>> 3;
            if (type == 3) {
                throw new CorruptSessionLogException(
                        "corrupt Zstandard session log: reserved block type at byte " + (off - 3), off - 3);
            }
            long payload = type == 1 ? 1 : blockSize;
            if (size - off < payload) {
                return torn(start);
            }
            off += payload;
            if (last) {
                break;
            }
        }
        if (checksum) {
            if (size - off < 4) {
                return torn(start);
            }
            off += 4;
        }
        pos = off;
        return new Frame(start, off, checksum);
    }

    private Frame torn(long start) {
        tornStart = start;
        pos = size;
        return null;
    }

    /** Reads the frame's 4-byte content checksum trailer as an unsigned int, or -1 without checksum. */
    static long checksumOf(FileChannel ch, Frame f) throws IOException {
        if (!f.checksum()) {
            return -1;
        }
        ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
        ch.read(b, f.end() - 4);
        return Integer.toUnsignedLong(b.getInt(0));
    }
}
