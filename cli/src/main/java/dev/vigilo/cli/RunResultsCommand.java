package dev.vigilo.cli;

import dev.vigilo.exec.view.RunResults;
import dev.vigilo.plan.RunStatusReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo run results UUID [--out FILE] [--force]}: one JSON line per executed case (docs/execution.md,
 * "Results"), streamed with bounded memory. With {@code --out} the lines go to a temporary file beside the target,
 * renamed over it only when every line was written and verified.
 */
@Command(
        name = "results",
        mixinStandardHelpOptions = true,
        description = {
            "Print one JSON line per executed case: case_id, ordinal, shard, chunk, status, attempts, output,"
                    + " evaluators (name to {passed, score, error}), gates and error (docs/cli.md).",
            "Works on running, settled, failed and cancelled runs alike: it lists what was committed. Every receipt"
                    + " is verified against its reference; a missing or altered one exits 1 naming its key."
        })
final class RunResultsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    IdParameters.Run runId;

    @Mixin
    OutputFileOptions output;

    @Override
    public Integer call() {
        UUID id = runId.id();
        output.check();
        try (Connections connections = CommandSupport.root(spec).connections()) {
            new RunStatusReader(connections.control().jdbi()).status(id); // unknown run: exit 3, nothing opened
            RunResults results = new RunResults(connections.placements(), connections.storage());
            if (!output.given()) {
                PrintWriter stdout = CommandSupport.out(spec);
                try (LineWriter lines = new LineWriter(stdout)) {
                    Interruptible.run(() -> results.write(id, lines));
                } catch (LineWriter.Closed e) {
                    // The reader went away (`| head`): what it wanted was written; stop quietly.
                }
                return ExitCode.OK;
            }
            RunResults.Summary summary = writeFile(id, results);
            CommandSupport.out(spec)
                    .printf(
                            "wrote %d results of %d chunks of run %s to %s%n",
                            summary.cases(), summary.chunks(), id, CommandSupport.shown(output.path()));
        }
        return ExitCode.OK;
    }

    /** Writes crash-safely beside the target and publishes on success; the temporary file never outlives it. */
    private RunResults.Summary writeFile(UUID id, RunResults results) {
        return Interruptible.run(() -> output.write(file -> results.write(id, file)));
    }

    /**
     * Bytes to a {@link PrintWriter}, a whole line at a time (UTF-8 never splits a character across a newline, so
     * each line decodes on its own). At most one line is buffered.
     */
    static final class LineWriter extends OutputStream {
        private final PrintWriter target;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();

        LineWriter(PrintWriter target) {
            this.target = target;
        }

        @Override
        public void write(int b) {
            line.write(b);
            if (b == '\n') {
                emit();
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            int start = off;
            for (int i = off; i < off + len; i++) {
                if (b[i] == '\n') {
                    line.write(b, start, i + 1 - start);
                    emit();
                    start = i + 1;
                }
            }
            line.write(b, start, off + len - start);
        }

        private void emit() {
            target.print(line.toString(StandardCharsets.UTF_8));
            line.reset();
        }

        @Override
        public void flush() {
            target.flush();
            if (target.checkError()) {
                throw new Closed();
            }
        }

        /** The target stopped accepting output (a closed pipe). */
        static final class Closed extends UncheckedIOException {
            private static final long serialVersionUID = 1L;

            Closed() {
                super(new IOException("the output was closed"));
            }
        }

        @Override
        public void close() {
            if (line.size() > 0) {
                emit();
            }
            flush();
        }
    }
}
