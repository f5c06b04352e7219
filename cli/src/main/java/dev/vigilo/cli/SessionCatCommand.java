package dev.vigilo.cli;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.sessionlog.SessionCat;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code vigilo session cat FILE}: committed events as JSONL, streaming. */
@Command(
        name = "cat",
        mixinStandardHelpOptions = true,
        description = {
            "Print the committed events of a session log as JSON lines, streaming (packed rows expanded; "
                    + "commit records and synthesized closers omitted).",
            "Exit 1 (after the events read so far) when the log is rejected."
        })
final class SessionCatCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The session log.")
    Path file;

    @Option(names = "--from-seq", paramLabel = "N", defaultValue = "0", description = "First seq to print (default 0).")
    long fromSeq;

    @Override
    public Integer call() {
        if (fromSeq < 0) {
            throw new InvalidInputException("--from-seq must be >= 0, got " + fromSeq + "; for example --from-seq 0");
        }
        PrintWriter out = CommandSupport.out(spec);
        SessionCat.CatReport report;
        try (LineWriterStream lines = new LineWriterStream(out)) {
            report = SessionCat.cat(SessionCommand.existingLog(file), fromSeq, lines);
        }
        if (!report.report().accepted()) {
            CommandSupport.err(spec)
                    .println("vigilo: error: " + file + " is rejected: "
                            + report.report().error() + " (at byte "
                            + report.report().errorOffset() + "); output stopped there");
            return ExitCode.FAILED;
        }
        return ExitCode.OK;
    }

    /** Adapts the byte stream of JSON lines to the command's writer, one whole line at a time (UTF-8 safe). */
    private static final class LineWriterStream extends OutputStream {
        private final PrintWriter out;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);

        LineWriterStream(PrintWriter out) {
            this.out = out;
        }

        @Override
        public void write(int b) {
            line.write(b);
            if (b == '\n') {
                out.write(line.toString(StandardCharsets.UTF_8));
                line.reset();
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            int start = off;
            for (int i = off; i < off + len; i++) {
                if (b[i] == '\n') {
                    line.write(b, start, i + 1 - start);
                    out.write(line.toString(StandardCharsets.UTF_8));
                    line.reset();
                    start = i + 1;
                }
            }
            line.write(b, start, off + len - start);
        }

        @Override
        public void close() {
            if (line.size() > 0) {
                out.write(line.toString(StandardCharsets.UTF_8));
                line.reset();
            }
            out.flush();
        }
    }
}
