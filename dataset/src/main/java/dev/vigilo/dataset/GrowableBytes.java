package dev.vigilo.dataset;

import java.util.Arrays;

/**
 * An unsynchronized growable byte array for encoding records on a hot path ({@link java.io.ByteArrayOutputStream}
 * locks on every write). The caller reads {@link #array()} up to {@link #size()}. Not thread-safe.
 */
final class GrowableBytes {
    /** The two lower-case hex digits of every byte value, at {@code 2 * value}. */
    private static final byte[] HEX_PAIRS = new byte[512];

    static {
        byte[] digits = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        for (int v = 0; v < 256; v++) {
            HEX_PAIRS[2 * v] = digits[v >> 4];
            HEX_PAIRS[2 * v + 1] = digits[v & 0xF];
        }
    }

    private byte[] bytes;
    private int size;

    GrowableBytes(int capacity) {
        this.bytes = new byte[Math.max(16, capacity)];
    }

    void put(byte b) {
        ensure(1);
        bytes[size++] = b;
    }

    void put(byte[] src) {
        put(src, 0, src.length);
    }

    void put(byte[] src, int offset, int length) {
        ensure(length);
        System.arraycopy(src, offset, bytes, size, length);
        size += length;
    }

    /** Appends {@code value} in decimal, as {@link Long#toString(long)} spells it, without making a string. */
    void putDecimal(long value) {
        if (value < 0) {
            put(Long.toString(value).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            return;
        }
        int digits = 1;
        for (long v = value / 10; v > 0; v /= 10) {
            digits++;
        }
        ensure(digits);
        for (int i = size + digits - 1; i >= size; i--) {
            bytes[i] = (byte) ('0' + value % 10);
            value /= 10;
        }
        size += digits;
    }

    /** Appends {@code src[offset, offset + length)} as lower-case hex, two characters per byte. */
    void putHex(byte[] src, int offset, int length) {
        ensure(2 * length);
        byte[] out = bytes;
        int at = size;
        for (int i = offset; i < offset + length; i++) {
            int pair = (src[i] & 0xFF) << 1;
            out[at] = HEX_PAIRS[pair];
            out[at + 1] = HEX_PAIRS[pair + 1];
            at += 2;
        }
        size = at;
    }

    /** Appends a big-endian long. */
    void putLong(long value) {
        ensure(8);
        for (int shift = 56; shift >= 0; shift -= 8) {
            bytes[size++] = (byte) (value >>> shift);
        }
    }

    /** Appends a big-endian int. */
    void putInt(int value) {
        ensure(4);
        for (int shift = 24; shift >= 0; shift -= 8) {
            bytes[size++] = (byte) (value >>> shift);
        }
    }

    byte[] array() {
        return bytes;
    }

    int size() {
        return size;
    }

    void reset() {
        size = 0;
    }

    private void ensure(int more) {
        if (size + more > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(size + more, bytes.length * 2));
        }
    }
}
