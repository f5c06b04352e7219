package dev.vigilo.sessionlog;

import com.github.luben.zstd.EndDirective;
import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdException;
import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import com.github.luben.zstd.ZstdOutputStreamNoFinalizer;
import dev.vigilo.common.errors.UnavailableException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * zstd frame encode/decode with zstd-jni. Encoding matches the official writer: streaming compression, level 3,
 * checksum on, no content size (descriptor 0x04). Decoding verifies the checksum when present.
 */
final class FrameCodec {
    static final int LEVEL = 3;

    private FrameCodec() {}

    /**
     * Frames up to this many plaintext bytes are compressed with a pooled context ({@link Pooled}); larger ones with
     * a stream of their own (a transcript batch is a few KiB; a large frame's stream costs little beside it).
     */
    static final int POOLED_MAX = 128 * 1024;
    /** Contexts kept for reuse: each holds zstd's level-3 tables and window (a few MiB of native memory). */
    private static final int POOL_SIZE = Math.max(2, Runtime.getRuntime().availableProcessors());

    private static final ConcurrentLinkedQueue<Pooled> POOL = new ConcurrentLinkedQueue<>();
    private static final AtomicInteger POOLED = new AtomicInteger();

    /**
     * A compression context with direct buffers for one frame of at most {@link #POOLED_MAX} bytes. A new stream per
     * frame allocated and initialised zstd's context each time: about 80 us per frame against 7 us reused, two frames
     * per transcript (docs/benchmarks.md, "Worker CPU per case"). Fed the same way as the stream (the input, then the
     * end of the frame, size unknown in advance), it gives the stream's bytes exactly ({@code
     * FrameCodecTest#aPooledContextGivesTheStreamsBytes}).
     */
    private static final class Pooled {
        final ZstdCompressCtx ctx = new ZstdCompressCtx();
        final ByteBuffer src = ByteBuffer.allocateDirect(POOLED_MAX);
        final ByteBuffer dst = ByteBuffer.allocateDirect((int) Zstd.compressBound(POOLED_MAX) + 64);

        byte[] encode(byte[] plain, int off, int len) {
            ctx.reset();
            ctx.setLevel(LEVEL);
            ctx.setChecksum(true);
            src.clear();
            src.put(plain, off, len);
            src.flip();
            dst.clear();
            ctx.compressDirectByteBufferStream(dst, src, EndDirective.CONTINUE);
            while (!ctx.compressDirectByteBufferStream(dst, src, EndDirective.END)) {
                if (!dst.hasRemaining()) {
                    throw new IllegalStateException("zstd frame of " + len + " bytes exceeds its bound");
                }
            }
            dst.flip();
            byte[] out = new byte[dst.remaining()];
            dst.get(out);
            return out;
        }
    }

    /** Compresses {@code plain} into one frame the way the official writer does. */
    static byte[] encode(byte[] plain, int off, int len) {
        ZstdNative.ensureLoaded();
        if (len == 0 || len > POOLED_MAX) {
            // An empty stream ends in its first call, which zstd writes with a content size; the context would not.
            return streamed(plain, off, len);
        }
        Pooled p = POOL.poll();
        if (p != null) {
            POOLED.decrementAndGet();
        } else {
            p = new Pooled();
        }
        byte[] out;
        try {
            out = p.encode(plain, off, len);
        } catch (RuntimeException e) {
            p.ctx.close(); // its state is unknown: not reused
            throw e instanceof ZstdException
                    ? new UnavailableException("zstd compression failed: " + e.getMessage(), e)
                    : e;
        }
        if (POOLED.incrementAndGet() <= POOL_SIZE) {
            POOL.offer(p);
        } else {
            POOLED.decrementAndGet();
            p.ctx.close();
        }
        return out;
    }

    /** {@link #encode} with a stream of its own: what every frame cost before the pool, and the large frames' path. */
    static byte[] streamed(byte[] plain, int off, int len) {
        ZstdNative.ensureLoaded();
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(64, len / 3));
            try (ZstdOutputStreamNoFinalizer z = new ZstdOutputStreamNoFinalizer(out, LEVEL)) {
                z.setChecksum(true);
                z.write(plain, off, len);
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new UnavailableException("zstd compression failed: " + e.getMessage(), e);
        }
    }

    static byte[] readRange(FileChannel ch, long start, long end) throws IOException {
        long len = end - start;
        if (len > Integer.MAX_VALUE - 16) {
            throw new CorruptSessionLogException("frame at byte " + start + " is larger than 2 GiB", start);
        }
        ByteBuffer b = ByteBuffer.allocate((int) len);
        while (b.hasRemaining()) {
            int r = ch.read(b, start + b.position());
            if (r < 0) {
                throw new IOException("file shrank while reading frame at " + start);
            }
        }
        return b.array();
    }

    /** Receives decompressed plaintext in chunks. */
    interface PlainSink {
        void write(byte[] buf, int off, int len);
    }

    /**
     * Decompresses one complete frame, streaming plaintext into {@code sink}.
     *
     * @throws IOException (zstd error, checksum mismatch) — the caller maps it to "frame failed validation"
     */
    static void decodeComplete(byte[] frame, PlainSink sink, byte[] buf) throws IOException {
        ZstdNative.ensureLoaded();
        try (InputStream z = new ZstdInputStreamNoFinalizer(new ByteArrayInputStream(frame))) {
            int n;
            while ((n = z.read(buf, 0, buf.length)) >= 0) {
                if (n > 0) {
                    sink.write(buf, 0, n);
                }
            }
        }
    }

    /**
     * Decompresses what is available of an incomplete final frame (checksum not verified). Like the published
     * reader, any decoder failure yields no plaintext at all.
     */
    static byte[] decodePrefix(byte[] partial, long maxBytes) {
        // Outside the catch below: a library that cannot load is unavailability, not an undecodable prefix.
        ZstdNative.ensureLoaded();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ZstdInputStreamNoFinalizer z = new ZstdInputStreamNoFinalizer(new ByteArrayInputStream(partial))) {
            z.setContinuous(true);
            byte[] buf = new byte[1 << 16];
            int n;
            while ((n = z.read(buf, 0, buf.length)) >= 0) {
                if (n == 0) {
                    break;
                }
                out.write(buf, 0, n);
                if (out.size() > maxBytes) {
                    return new byte[0];
                }
            }
        } catch (IOException | RuntimeException e) {
            return new byte[0];
        }
        return out.toByteArray();
    }
}
