package dev.vigilo.dataset;

/**
 * Walks the lines of one {@link SourceBatches.Batch} as docs/formats/dataset.md defines them: a line ends at
 * {@code \n}, one {@code \r} before it is dropped, and a UTF-8 byte-order mark at the very start of the file is not
 * part of the first line. Positions index the batch's array. Not thread-safe.
 */
final class BatchLines {
    private final byte[] bytes;
    private final int length;
    private final boolean startsFile;
    private int start;
    private int end;
    private int next;
    private int lineNumber;

    BatchLines(SourceBatches.Batch batch) {
        this.bytes = batch.bytes();
        this.length = batch.length();
        this.startsFile = batch.startsFile();
    }

    /** Advances to the next line; false after the last one. */
    boolean next() {
        if (next >= length) {
            return false;
        }
        start = next;
        int newline = indexOfNewline(bytes, start, length);
        end = newline < 0 ? length : newline;
        next = newline < 0 ? length : newline + 1;
        if (end > start && bytes[end - 1] == '\r') {
            end--;
        }
        lineNumber++;
        if (startsFile
                && lineNumber == 1
                && end - start >= 3
                && (bytes[start] & 0xFF) == 0xEF
                && (bytes[start + 1] & 0xFF) == 0xBB
                && (bytes[start + 2] & 0xFF) == 0xBF) {
            start += 3;
        }
        return true;
    }

    /** Where the current line's content starts. */
    int start() {
        return start;
    }

    /** Where the current line's content ends (before its line ending). */
    int end() {
        return end;
    }

    int length() {
        return end - start;
    }

    /** 1-based number of the current line within the batch. */
    int lineNumber() {
        return lineNumber;
    }

    /** True when the current line holds only spaces and tabs (or nothing). */
    boolean isBlank() {
        for (int i = start; i < end; i++) {
            if (bytes[i] != ' ' && bytes[i] != '\t') {
                return false;
            }
        }
        return true;
    }

    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final long NEWLINES = 0x0A0A0A0A0A0A0A0AL;
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGH_BITS = 0x8080808080808080L;

    /** The first {@code \n} in {@code bytes[from, to)}, or -1; eight bytes at a time (a zero-byte test on XOR). */
    static int indexOfNewline(byte[] bytes, int from, int to) {
        int i = from;
        for (; i + 8 <= to; i += 8) {
            long x = (long) LONGS.get(bytes, i) ^ NEWLINES;
            long found = (x - ONES) & ~x & HIGH_BITS;
            if (found != 0) {
                return i + (Long.numberOfTrailingZeros(found) >>> 3);
            }
        }
        for (; i < to; i++) {
            if (bytes[i] == '\n') {
                return i;
            }
        }
        return -1;
    }
}
