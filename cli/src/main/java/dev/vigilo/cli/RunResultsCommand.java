package dev.vigilo.cli;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.exec.view.CaseResults;
import dev.vigilo.exec.view.JunitReport;
import dev.vigilo.exec.view.RunResults;
import dev.vigilo.plan.RunStatusReader;
import dev.vigilo.web.DashboardSources;
import dev.vigilo.web.ResultLists;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.function.LongPredicate;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo run results UUID [--format jsonl|junit] [--out FILE] [--force]}: one JSON line per executed case
 * (docs/execution.md, "Results"), or with {@code --format junit} a JUnit XML report (one testsuite per gate, one
 * testcase per case it selects), streamed with bounded memory. With {@code --out} the output goes to a temporary file
 * beside the target, renamed over it only when all of it was written and verified.
 */
@Command(
        name = "results",
        mixinStandardHelpOptions = true,
        description = {
            "Print one JSON line per executed case: case_id, ordinal, shard, chunk, status, attempts, output,"
                    + " evaluators (name to {passed, score, error}), gates and error (docs/cli.md); in a run of several"
                    + " epochs also epoch_passes (gate to passing epochs) and epochs (each epoch's own keys).",
            "With --format junit: a JUnit XML report for CI systems instead, one testsuite per gate and one testcase"
                    + " per case it selects (failure, error, or skipped when it never ran).",
            "Works on running, settled, failed and cancelled runs alike: it lists what was committed. Every receipt"
                    + " is verified against its reference; a missing or altered one exits 1 naming its key."
        })
final class RunResultsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    IdParameters.Run runId;

    @Option(
            names = "--format",
            paramLabel = "FORMAT",
            defaultValue = JSONL,
            description = "jsonl (one JSON line per executed case, the default), csv (the same keys as columns, nested"
                    + " values as JSON text) or junit (JUnit XML: one testsuite per gate, one testcase per case it"
                    + " selects).")
    String format;

    @Option(
            names = "--outcome",
            paramLabel = "OUTCOME",
            description = "Only cases with this outcome: passed, failed or errored (over every gate, or in --gate).")
    String outcome;

    @Option(
            names = "--gate",
            paramLabel = "GATE",
            description = "Only the cases this gate selects (with --outcome: their outcome in this gate).")
    String gate;

    @Option(
            names = "--evaluator",
            paramLabel = "EVALUATOR",
            description = "Only the cases this evaluator scored (with --outcome: its own result).")
    String evaluator;

    @Option(
            names = "--error-type",
            paramLabel = "TYPE",
            description = "Only the cases with this error type (the agent's, else the first evaluator's that errored).")
    String errorType;

    @Option(names = "--group", paramLabel = "GROUP", description = "Only the cases of this dataset group.")
    String group;

    @Option(names = "--tag", paramLabel = "TAG", description = "Only the cases with this dataset tag.")
    String tag;

    @Option(
            names = "--search",
            paramLabel = "TEXT",
            description = "Only the cases whose id, input, output or reason holds this text (case-insensitive; the"
                    + " first 200 bytes of each, as the dashboard's results explorer searches).")
    String search;

    @Mixin
    OutputFileOptions output;

    static final String JSONL = "jsonl";
    static final String CSV = "csv";
    static final String JUNIT = "junit";

    /** Whether {@code --format} asks for JUnit XML; anything but the three formats is refused (exit 3). */
    private boolean junit() {
        return switch (format) {
            case JSONL, CSV -> false;
            case JUNIT -> true;
            default ->
                throw new InvalidInputException("--format: unknown format '" + CommandSupport.shown(format)
                        + "'; use --format jsonl (one JSON line per case, the default), csv, or junit (JUnit XML)");
        };
    }

    /** The cases asked for: every case, or those --outcome and --gate name (not with JUnit, which has all). */
    private CaseResults.Filter filter(boolean junit) {
        if (junit && (outcome != null || gate != null || lists().any())) {
            throw new InvalidInputException("--outcome, --gate, --evaluator, --error-type, --group, --tag and --search"
                    + " select cases of --format jsonl or csv; a JUnit report always has every gate's cases");
        }
        return new CaseResults.Filter(
                Optional.ofNullable(outcome).map(o -> {
                    try {
                        return CaseResults.Outcome.parse(o);
                    } catch (InvalidInputException e) {
                        throw new InvalidInputException("--outcome: " + e.getMessage());
                    }
                }),
                Optional.ofNullable(gate));
    }

    /** The results explorer's filters beyond outcome and gate. */
    private ResultLists.Filter lists() {
        return new ResultLists.Filter(
                Optional.ofNullable(evaluator),
                Optional.ofNullable(errorType),
                Optional.ofNullable(group),
                Optional.ofNullable(tag),
                Optional.ofNullable(search).map(String::strip).filter(x -> !x.isEmpty()));
    }

    private RunResults.Format resultsFormat() {
        return CSV.equals(format) ? RunResults.Format.CSV : RunResults.Format.JSONL;
    }

    @Override
    public Integer call() {
        boolean junit = junit();
        CaseResults.Filter filter = filter(junit);
        UUID id = runId.id();
        output.check();
        try (Connections connections = CommandSupport.root(spec).connections()) {
            new RunStatusReader(connections.control().jdbi()).status(id); // unknown run: exit 3, nothing opened
            if (junit) {
                return junitReport(id, connections);
            }
            RunResults results = new RunResults(connections.placements(), connections.storage());
            // The explorer's filters read the run's index (one pass over receipts and case files) before streaming.
            LongPredicate listed = lists().any()
                    ? ResultLists.listed(
                            new DashboardSources.Databases(
                                    connections.control().jdbi(), connections.placements(), connections.storage()),
                            id,
                            filter,
                            lists())
                    : ordinal -> true;
            if (!output.given()) {
                PrintWriter stdout = CommandSupport.out(spec);
                try (LineWriter lines = new LineWriter(stdout)) {
                    Interruptible.run(() -> results.write(id, lines, filter, resultsFormat(), listed));
                } catch (LineWriter.Closed e) {
                    // The reader went away (`| head`): what it wanted was written; stop quietly.
                }
                return ExitCode.OK;
            }
            RunResults.Summary summary = writeFile(id, results, filter, listed);
            CommandSupport.out(spec)
                    .printf(
                            "wrote %d results of %d chunks of run %s to %s%n",
                            summary.cases(), summary.chunks(), id, CommandSupport.shown(output.path()));
        }
        return ExitCode.OK;
    }

    /** The JUnit XML report, to stdout or to the {@code --out} file (written aside, renamed on success). */
    private int junitReport(UUID id, Connections connections) {
        JunitReport report = new JunitReport(connections.placements(), connections.storage());
        if (!output.given()) {
            try (LineWriter lines = new LineWriter(CommandSupport.out(spec))) {
                Interruptible.run(() -> report.write(id, lines));
            } catch (LineWriter.Closed e) {
                // The reader went away (`| head`): stop quietly.
            }
            return ExitCode.OK;
        }
        JunitReport.Summary s = Interruptible.run(() -> output.write(file -> report.write(id, file)));
        CommandSupport.out(spec)
                .printf(
                        "wrote %d test cases (%d failures, %d errors, %d skipped) in %d suites of run %s to %s%n",
                        s.tests(),
                        s.failures(),
                        s.errors(),
                        s.skipped(),
                        s.gates(),
                        id,
                        CommandSupport.shown(output.path()));
        return ExitCode.OK;
    }

    /** Writes crash-safely beside the target and publishes on success; the temporary file never outlives it. */
    private RunResults.Summary writeFile(UUID id, RunResults results, CaseResults.Filter filter, LongPredicate listed) {
        return Interruptible.run(() -> output.write(file -> results.write(id, file, filter, resultsFormat(), listed)));
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
