package dev.vigilo.cli;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/** Splits a UTF-8 byte stream of lines into whole lines (without their newline), each passed on as it completes. */
final class LineSink extends OutputStream {
    private final Consumer<String> sink;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);

    LineSink(Consumer<String> sink) {
        this.sink = sink;
    }

    @Override
    public void write(int b) {
        if (b == '\n') {
            emit();
        } else {
            line.write(b);
        }
    }

    @Override
    public void write(byte[] b, int off, int len) {
        int start = off;
        for (int i = off; i < off + len; i++) {
            if (b[i] == '\n') {
                line.write(b, start, i - start);
                emit();
                start = i + 1;
            }
        }
        line.write(b, start, off + len - start);
    }

    private void emit() {
        sink.accept(line.toString(StandardCharsets.UTF_8));
        line.reset();
    }

    /** Passes on a last line without a newline, if any. */
    @Override
    public void close() {
        if (line.size() > 0) {
            emit();
        }
    }
}
