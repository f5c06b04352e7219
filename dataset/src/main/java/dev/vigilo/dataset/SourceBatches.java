package dev.vigilo.dataset;

import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Objects;

/**
 * Cuts a JSONL byte stream into batches of whole lines, hashing every byte it reads, without looking inside the
 * lines: a batch is about {@code batchBytes} long and ends just after a {@code \n} (the last batch may end without
 * one). Equal input gives equal batches, so two passes over an unchanged file see the same cuts.
 *
 * <p>A line longer than {@code maxLineBytes} (plus one byte of slack for the {@code \r} of a CRLF line) fails with
 * {@link LineTooLongException} once every batch before it was returned, so memory stays bounded by one batch and
 * one longest line. Each batch is a new array the caller owns. Not thread-safe.
 */
final class SourceBatches implements AutoCloseable {
    private final InputStream in;
    private final int batchBytes;
    private final int maxLineBytes;
    private final MessageDigest sourceDigest = Sha256.newDigest();
    /** Bytes read but not yet returned: the start of a line whose end was not read yet. */
    private byte[] tail = new byte[0];

    private int tailLength;
    private boolean eof;
    private long batches;
    private long bytesRead;

    /** One batch: {@code bytes[0, length)} holds whole lines; {@code index} counts from 0. */
    record Batch(long index, byte[] bytes, int length) {
        boolean startsFile() {
            return index == 0;
        }
    }

    SourceBatches(InputStream in, int batchBytes, int maxLineBytes) {
        this.in = Objects.requireNonNull(in, "in");
        // A buffer never longer than the longest allowed line (plus its slack) cannot hold a whole line that is
        // too long, so checking only a buffer without any newline finds every such line.
        this.batchBytes = (int) Math.min(batchBytes, maxLineBytes + 1L);
        this.maxLineBytes = maxLineBytes;
    }

    /**
     * Reads the next batch.
     *
     * @return the batch, or null at the end of the input
     * @throws LineTooLongException when the next line exceeds the limit
     */
    Batch next() throws IOException {
        byte[] buffer = Arrays.copyOf(tail, Math.max(batchBytes, tailLength));
        int length = tailLength;
        while (true) {
            length = fill(buffer, length);
            int lastNewline = lastIndexOf(buffer, length, (byte) '\n');
            if (lastNewline >= 0) {
                int cut = lastNewline + 1;
                tailLength = length - cut;
                tail = tailLength == 0 ? tail : Arrays.copyOfRange(buffer, cut, length);
                return new Batch(batches++, buffer, cut);
            }
            // The buffer holds only the start of one line.
            if (length > maxLineBytes + 1) {
                throw new LineTooLongException(maxLineBytes);
            }
            if (eof) {
                tailLength = 0;
                return length == 0 ? null : new Batch(batches++, buffer, length);
            }
            // Grow to hold the whole line, up to one byte past the longest allowed one.
            buffer = Arrays.copyOf(buffer, (int) Math.min((long) buffer.length * 2, maxLineBytes + 2L));
        }
    }

    /** Bytes consumed so far. */
    long bytesRead() {
        return bytesRead;
    }

    /** SHA-256 of every byte of the input; call only after {@link #next()} returned null. */
    Sha256 sourceSha256() {
        if (!eof || tailLength > 0) {
            throw new IllegalStateException("the source hash is known only at the end of the input");
        }
        return Sha256.ofDigest(sourceDigest.digest());
    }

    private int fill(byte[] buffer, int length) throws IOException {
        while (!eof && length < buffer.length) {
            int n = in.readNBytes(buffer, length, buffer.length - length);
            sourceDigest.update(buffer, length, n);
            bytesRead += n;
            length += n;
            if (length < buffer.length) {
                eof = true; // readNBytes returns short only at the end of the stream
            }
        }
        return length;
    }

    private static int lastIndexOf(byte[] bytes, int length, byte b) {
        for (int i = length - 1; i >= 0; i--) {
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

    /** The line after the last returned batch is longer than the limit. */
    static final class LineTooLongException extends IOException {
        private static final long serialVersionUID = 1L;

        LineTooLongException(int limit) {
            super("a line is longer than " + limit + " bytes");
        }
    }
}
