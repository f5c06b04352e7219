package dev.vigilo.web;

import java.io.OutputStream;

/**
 * An output stream that hands what is written to it on as lines: {@link #append} receives each non-empty piece of
 * the current line as it arrives (a line may come in several pieces), {@link #endLine} each newline. The bytes are
 * never copied here; what a subclass keeps of a line, and how much, is its own choice. Used by the readers of
 * {@code SessionCat}'s JSON lines output, which stream a whole log through one pass.
 */
abstract class LineSplitter extends OutputStream {
    /** A piece of the current line ({@code len > 0}), without its newline. */
    abstract void append(byte[] b, int off, int len);

    /** The current line ended. */
    abstract void endLine();

    @Override
    public final void write(int b) {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public final void write(byte[] b, int off, int len) {
        int end = off + len;
        int start = off;
        for (int i = off; i < end; i++) {
            if (b[i] == '\n') {
                if (i > start) {
                    append(b, start, i - start);
                }
                endLine();
                start = i + 1;
            }
        }
        if (end > start) {
            append(b, start, end - start);
        }
    }
}
