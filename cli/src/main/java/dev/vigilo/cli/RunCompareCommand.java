package dev.vigilo.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.Names;
import dev.vigilo.exec.GateDecision;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.view.RunComparison;
import dev.vigilo.stats.PairedDifference;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code vigilo run compare RUN_A RUN_B [--json | --flips [--format jsonl|csv]]}. */
@Command(
        name = "compare",
        mixinStandardHelpOptions = true,
        description = {
            "Compare two runs: per gate, the pass rate of A and of B and the difference; then every case whose outcome"
                    + " changed from A to B (pass_to_fail, fail_to_pass, newly_errored, error_to_fail), matched by"
                    + " case id; per gate, whether the difference is significant (the exact McNemar p-value over"
                    + " the cases that passed in one run only, and the paired difference with its interval); and how"
                    + " many cases only one of them executed.",
            "Streams: runs of any size are compared in bounded memory (runs over different datasets are sorted by case"
                    + " id in the temporary directory)."
        })
final class RunCompareCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "RUN_A", description = "The run compared from (for example the baseline).")
    String runA;

    @Parameters(index = "1", paramLabel = "RUN_B", description = "The run compared to.")
    String runB;

    @Mixin
    JsonOption json;

    @Option(
            names = "--flips",
            description = "Print only the flipped cases, for a spreadsheet or a script: --format jsonl (one line per"
                    + " case, the default) or csv (one row per changed gate); the dashboard's compare downloads.")
    boolean flips;

    @Option(names = "--format", paramLabel = "FORMAT", description = "With --flips: jsonl (the default) or csv.")
    String format;

    private RunComparison.FlipFormat flipFormat() {
        if (format != null && !flips) {
            throw new InvalidInputException("--format applies to --flips; add --flips, or drop --format");
        }
        if (flips && json.requested()) {
            throw new InvalidInputException("--flips prints its own format (--format jsonl or csv); drop --json");
        }
        return switch (format == null ? "jsonl" : format) {
            case "jsonl" -> RunComparison.FlipFormat.JSONL;
            case "csv" -> RunComparison.FlipFormat.CSV;
            default ->
                throw new InvalidInputException("--format: unknown format '" + CommandSupport.shown(format)
                        + "'; use --format jsonl (one JSON line per flipped case, the default) or csv");
        };
    }

    @Override
    public Integer call() {
        UUID a = CommandSupport.runId(runA, "RUN_A");
        UUID b = CommandSupport.runId(runB, "RUN_B");
        RunComparison.FlipFormat flipFormat = flipFormat();
        PrintWriter out = CommandSupport.out(spec);
        try (Connections connections = CommandSupport.root(spec).connections()) {
            RunComparison comparison = new RunComparison(connections.placements(), connections.storage());
            if (flips) {
                try (RunResultsCommand.LineWriter lines = new RunResultsCommand.LineWriter(out)) {
                    Interruptible.run(() -> comparison.writeFlips(a, b, lines, flipFormat));
                } catch (RunResultsCommand.LineWriter.Closed e) {
                    // The reader went away (`| head`): stop quietly.
                }
                return ExitCode.OK;
            }
            if (json.requested()) {
                json(comparison, a, b, out);
            } else {
                text(comparison, a, b, out);
            }
            out.flush();
            return ExitCode.OK;
        }
    }

    private static void text(RunComparison comparison, UUID a, UUID b, PrintWriter out) {
        boolean[] any = {false};
        RunComparison.Summary s = comparison.compare(a, b, new RunComparison.Listener() {
            @Override
            public void start(RunComparison.Header h) {
                out.printf("A: run %s (%s, dataset %s)%n", h.runA(), h.statusA(), h.datasetA());
                out.printf("B: run %s (%s, dataset %s)%n", h.runB(), h.statusB(), h.datasetB());
                out.println(
                        h.sameDataset()
                                ? "same dataset: cases matched by ordinal"
                                : "different datasets: cases matched by id");
                out.printf("%-24s %22s %22s %10s%n", "GATE", "PASS RATE A", "PASS RATE B", "DIFF");
                for (RunComparison.GateComparison g : h.gates()) {
                    out.printf(
                            "%-24s %22s %22s %10s%n",
                            Names.printable(g.name()),
                            rate(g.a()),
                            rate(g.b()),
                            g.difference()
                                    .map(d -> String.format(Locale.ROOT, "%+.1f pts", d * 100))
                                    .orElse("-"));
                }
                out.flush();
            }

            @Override
            public void flip(RunComparison.Flip f) {
                if (!any[0]) {
                    out.println("flipped cases:");
                    any[0] = true;
                }
                List<String> changes = new ArrayList<>();
                for (RunComparison.GateChange c : f.changes()) {
                    changes.add(c.gate() + " " + c.a() + " -> " + c.b() + " ("
                            + c.change().wire() + ")");
                }
                out.println(Names.printable("  " + f.caseId() + ": " + String.join(", ", changes)));
            }
        });
        printSignificance(out, s);
        out.printf(
                "compared %d cases; flipped %d (pass_to_fail %d, fail_to_pass %d, newly_errored %d, error_to_fail %d);"
                        + " only in A: %d, only in B: %d%n",
                s.compared(),
                s.flipped(),
                s.changes().get(RunComparison.Change.PASS_TO_FAIL),
                s.changes().get(RunComparison.Change.FAIL_TO_PASS),
                s.changes().get(RunComparison.Change.NEWLY_ERRORED),
                s.changes().get(RunComparison.Change.ERROR_TO_FAIL),
                s.onlyInA(),
                s.onlyInB());
    }

    /**
     * Per gate both runs have, the paired test of its pass rates over the cases both executed and it selects in both:
     * the discordant cases, the exact McNemar p-value, the difference B - A with its interval, and whether it is
     * significant at run A's confidence.
     */
    private static void printSignificance(PrintWriter out, RunComparison.Summary s) {
        if (s.significance().isEmpty()) {
            return;
        }
        out.println("significance per gate (paired over the cases both runs executed and the gate selects in both):");
        String row = "%-24s %7s %7s %7s %10s %10s  %-27s %s%n";
        out.printf(row, "GATE", "PAIRED", "A ONLY", "B ONLY", "P VALUE", "DIFF", "CI OF DIFF", "SIGNIFICANT");
        for (RunComparison.GateSignificance g : s.significance()) {
            PairedDifference d = g.difference();
            out.printf(
                    row,
                    Names.printable(g.gate()),
                    g.paired(),
                    g.mcNemar().aOnly(),
                    g.mcNemar().bOnly(),
                    pValue(g.mcNemar().pValue()),
                    points(d.difference()),
                    level(d) + " [" + points(d.low()) + ", " + points(d.high()) + "]",
                    g.significant() ? "yes (p < " + alpha(d) + ")" : "no");
        }
    }

    /** {@code 0.0020}, {@code 0.219}, {@code 2.2e-05}: three significant digits. */
    static String pValue(double p) {
        return p >= 0.001 ? String.format(Locale.ROOT, "%.3g", p) : String.format(Locale.ROOT, "%.2g", p);
    }

    private static String points(double d) {
        return String.format(Locale.ROOT, "%+.1f pts", d * 100);
    }

    private static String level(PairedDifference d) {
        return BigDecimal.valueOf(d.confidence().level())
                        .movePointRight(2)
                        .stripTrailingZeros()
                        .toPlainString()
                + "%";
    }

    private static String alpha(PairedDifference d) {
        return BigDecimal.ONE
                .subtract(BigDecimal.valueOf(d.confidence().level()))
                .stripTrailingZeros()
                .toPlainString();
    }

    private static String rate(Optional<GateResult> g) {
        return g.map(r -> String.format(Locale.ROOT, "%.1f%% (%d/%d)", r.passRate() * 100, r.passed(), r.planned()))
                .orElse("-");
    }

    private static void json(RunComparison comparison, UUID a, UUID b, PrintWriter out) {
        try (JsonGenerator g = Json.generator(out)) {
            g.writeStartObject();
            List<RunComparison.GateComparison> gates = new ArrayList<>();
            RunComparison.Summary s = comparison.compare(a, b, new RunComparison.Listener() {
                @Override
                public void start(RunComparison.Header h) {
                    gates.addAll(h.gates());
                    try {
                        g.writeStringField("run_a", h.runA().toString());
                        g.writeStringField("run_b", h.runB().toString());
                        g.writeStringField("status_a", h.statusA());
                        g.writeStringField("status_b", h.statusB());
                        g.writeStringField("dataset_a", h.datasetA().toString());
                        g.writeStringField("dataset_b", h.datasetB().toString());
                        g.writeBooleanField("same_dataset", h.sameDataset());
                        g.writeArrayFieldStart("flips");
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }

                @Override
                public void flip(RunComparison.Flip f) {
                    try {
                        g.writeStartObject();
                        g.writeStringField("case_id", f.caseId());
                        g.writeNumberField("ordinal_a", f.ordinalA());
                        g.writeNumberField("ordinal_b", f.ordinalB());
                        g.writeArrayFieldStart("changes");
                        for (RunComparison.GateChange c : f.changes()) {
                            g.writeStartObject();
                            g.writeStringField("gate", c.gate());
                            g.writeStringField("a", c.a());
                            g.writeStringField("b", c.b());
                            g.writeStringField("change", c.change().wire());
                            g.writeEndObject();
                        }
                        g.writeEndArray();
                        g.writeEndObject();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            });
            g.writeEndArray();
            // The gates follow the flips: their significance is known once every case is read.
            g.writeArrayFieldStart("gates");
            for (RunComparison.GateComparison c : gates) {
                g.writeStartObject();
                g.writeStringField("name", c.name());
                gate(g, "a", c.a());
                gate(g, "b", c.b());
                g.writeFieldName("difference");
                if (c.difference().isPresent()) {
                    g.writeNumber(c.difference().get());
                } else {
                    g.writeNull();
                }
                significance(g, s.significance(c.name()));
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeObjectFieldStart("summary");
            g.writeNumberField("compared", s.compared());
            g.writeNumberField("flipped", s.flipped());
            for (RunComparison.Change c : RunComparison.Change.values()) {
                g.writeNumberField(c.wire(), s.changes().get(c));
            }
            g.writeNumberField("only_in_a", s.onlyInA());
            g.writeNumberField("only_in_b", s.onlyInB());
            g.writeEndObject();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing the comparison failed: " + e.getMessage(), e);
        }
        out.println();
    }

    /** The gate's significance keys ({@link RunComparison.GateSignificance#addTo}), written into the open object. */
    static void significance(JsonGenerator g, Optional<RunComparison.GateSignificance> x) throws IOException {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        RunComparison.GateSignificance.addTo(n, x);
        for (var field : n.properties()) {
            g.writeFieldName(field.getKey());
            g.writeTree(field.getValue());
        }
    }

    private static void gate(JsonGenerator g, String field, Optional<GateResult> r) throws IOException {
        g.writeFieldName(field);
        if (r.isEmpty()) {
            g.writeNull();
            return;
        }
        GateResult x = r.get();
        g.writeStartObject();
        g.writeNumberField("planned", x.planned());
        g.writeNumberField("passed", x.passed());
        g.writeNumberField("failed", x.failed());
        g.writeNumberField("errored", x.errored());
        g.writeNumberField("pass_rate", x.passRate());
        g.writeFieldName("passed_gate");
        if (x.passedGate().isPresent()) {
            g.writeBoolean(x.passedGate().get());
        } else {
            g.writeNull();
        }
        g.writeStringField("decision", x.decision().map(GateDecision::spelling).orElse(null));
        g.writeEndObject();
    }
}
