package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** How {@code run results} streams its bytes to stdout: whole lines, any UTF-8 split, a closed reader noticed. */
class LineWriterTest {
    @Test
    void linesArriveWholeEvenWhenACharacterIsSplitAcrossWrites() {
        StringWriter text = new StringWriter();
        byte[] bytes = "{\"output\":\"Zürich ✓\"}\n{\"output\":\"😀\"}\npartial".getBytes(StandardCharsets.UTF_8);
        try (RunResultsCommand.LineWriter w = new RunResultsCommand.LineWriter(new PrintWriter(text))) {
            for (byte b : bytes) {
                w.write(new byte[] {b}, 0, 1); // every multi-byte character split
            }
            w.flush();
            assertThat(text.toString()).isEqualTo("{\"output\":\"Zürich ✓\"}\n{\"output\":\"😀\"}\n");
        }
        assertThat(text.toString()).endsWith("\npartial");
    }

    @Test
    void aClosedReaderStopsTheStream() {
        OutputStream closed = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("Broken pipe");
            }
        };
        RunResultsCommand.LineWriter w = new RunResultsCommand.LineWriter(new PrintWriter(closed));
        w.write("{}\n".getBytes(StandardCharsets.UTF_8), 0, 3);
        assertThatThrownBy(w::flush).isInstanceOf(RunResultsCommand.LineWriter.Closed.class);
    }
}
