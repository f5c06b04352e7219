package dev.vigilo.sessionlog;

import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import com.github.luben.zstd.ZstdOutputStreamNoFinalizer;
import dev.vigilo.common.errors.UnavailableException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * zstd frame encode/decode with zstd-jni. Encoding matches the official writer: streaming compression, level 3,
 * checksum on, no content size (descriptor 0x04). Decoding verifies the checksum when present.
 */
final class FrameCodec {
    static final int LEVEL = 3;

    private FrameCodec() {}

    /** Compresses {@code plain} into one frame the way the official writer does. */
    static byte[] encode(byte[] plain, int off, int len) {
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
