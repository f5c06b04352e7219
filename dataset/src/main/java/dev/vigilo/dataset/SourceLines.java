package dev.vigilo.dataset;

import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Objects;

/**
 * Splits a JSONL byte stream into lines without decoding it, hashing every byte it reads.
 *
 * <p>A line ends at {@code \n}; a {@code \r} before it is dropped (CRLF files). A UTF-8 byte-order mark at the very
 * start is skipped as a line's content but still hashed, since the source hash covers the uploaded bytes exactly.
 * A line longer than {@code maxLineBytes} is an error at that line, so memory stays bounded by one line and one
 * read buffer whatever the file size. Not thread-safe.
 */
final class SourceLines implements AutoCloseable {
    private static final int READ_BUFFER = 1 << 16;

    private final InputStream in;
    private final int maxLineBytes;
    private final MessageDigest sourceDigest = Sha256.newDigest();
    private final byte[] buffer = new byte[READ_BUFFER];
    private int bufferPos;
    private int bufferEnd;
    private boolean eof;
    private byte[] line = new byte[1024];
    private int lineLength;
    private long lineNumber;
    private long bytesRead;

    SourceLines(InputStream in, int maxLineBytes) {
        this.in = Objects.requireNonNull(in, "in");
        this.maxLineBytes = maxLineBytes;
    }

    /**
     * Advances to the next line.
     *
     * @return false at the end of the input
     * @throws LineTooLongException when the line exceeds the limit
     */
    boolean next() throws IOException {
        lineLength = 0;
        if (!fill()) {
            return false;
        }
        lineNumber++;
        while (true) {
            int newline = indexOf(buffer, bufferPos, bufferEnd, (byte) '\n');
            int end = newline < 0 ? bufferEnd : newline;
            append(buffer, bufferPos, end - bufferPos);
            if (newline >= 0) {
                bufferPos = newline + 1;
                break;
            }
            bufferPos = bufferEnd;
            if (!fill()) {
                break;
            }
        }
        if (lineLength > 0 && line[lineLength - 1] == '\r') {
            lineLength--;
        }
        if (lineNumber == 1
                && lineLength >= 3
                && (line[0] & 0xFF) == 0xEF
                && (line[1] & 0xFF) == 0xBB
                && (line[2] & 0xFF) == 0xBF) {
            System.arraycopy(line, 3, line, 0, lineLength - 3);
            lineLength -= 3;
        }
        return true;
    }

    /** The current line's bytes; valid until the next call of {@link #next()}. */
    byte[] lineBytes() {
        return line;
    }

    int lineLength() {
        return lineLength;
    }

    /** 1-based number of the current line. */
    long lineNumber() {
        return lineNumber;
    }

    /** True when the current line holds only spaces and tabs (or nothing). */
    boolean lineIsBlank() {
        for (int i = 0; i < lineLength; i++) {
            if (line[i] != ' ' && line[i] != '\t') {
                return false;
            }
        }
        return true;
    }

    /** Bytes consumed so far. */
    long bytesRead() {
        return bytesRead;
    }

    /** SHA-256 of every byte of the input; call only after {@link #next()} returned false. */
    Sha256 sourceSha256() {
        if (!eof) {
            throw new IllegalStateException("the source hash is known only at the end of the input");
        }
        return Sha256.ofDigest(sourceDigest.digest());
    }

    private boolean fill() throws IOException {
        if (bufferPos < bufferEnd) {
            return true;
        }
        if (eof) {
            return false;
        }
        int n = in.readNBytes(buffer, 0, buffer.length);
        if (n <= 0) {
            eof = true;
            return false;
        }
        sourceDigest.update(buffer, 0, n);
        bytesRead += n;
        bufferPos = 0;
        bufferEnd = n;
        if (n < buffer.length) {
            // readNBytes returns short only at the end of the stream.
            eof = true;
        }
        return true;
    }

    private void append(byte[] src, int from, int length) throws LineTooLongException {
        // Allow one byte of slack for the \r a CRLF line carries before its limit is judged.
        if ((long) lineLength + length > maxLineBytes + 1L) {
            throw new LineTooLongException(lineNumber, maxLineBytes);
        }
        if (lineLength + length > line.length) {
            line = Arrays.copyOf(line, Math.max(lineLength + length, Math.min(line.length * 2, maxLineBytes + 1)));
        }
        System.arraycopy(src, from, line, lineLength, length);
        lineLength += length;
    }

    private static int indexOf(byte[] bytes, int from, int to, byte b) {
        for (int i = from; i < to; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    /** A line is longer than the configured limit. */
    static final class LineTooLongException extends IOException {
        private static final long serialVersionUID = 1L;
        final long line;

        LineTooLongException(long line, int limit) {
            super("line " + line + " is longer than " + limit + " bytes");
            this.line = line;
        }
    }
}
