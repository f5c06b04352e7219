package dev.vigilo.exec.view;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.ScratchDirs;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.PlanRecord;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.plan.ChunkFile;
import dev.vigilo.plan.GateFile;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.plan.RunLifecycle;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;
import org.jdbi.v3.core.Jdbi;

/**
 * {@code vigilo run results --format junit}: a run's results as JUnit XML, for CI systems (docs/execution.md,
 * "Results"). One {@code <testsuite>} per gate (in gate order) inside {@code <testsuites name="vigilo run ID">}, one
 * {@code <testcase classname="GATE" name="CASE_ID">} per case the gate selects, in ordinal order: passed (no child),
 * {@code <failure>} (the gate's required evaluators that did not pass, with their scores), {@code <error>} (the
 * agent's error, or the errors of the gate's required evaluators, type and message), or {@code <skipped
 * message="never ran">} for a case whose chunk has no receipt (a failed chunk, a cancelled run; {@code "not run
 * yet"} while the run still executes). So a suite's {@code tests} is the gate's planned count, as in the gate
 * table, {@code failures} and {@code errors} its failed and errored counts, and {@code skipped} planned minus
 * executed. In a run of several epochs a testcase is the reduced case, and a failure's or error's message ends with
 * how many of its epochs passed the gate ({@code (1 of 3 epochs passed)}).
 *
 * <p>The same reads as {@link RunResults}: the published plan's gate chain and chunk index (walked in chunk order),
 * merged with the run's chunk rows; a done row's receipt is read through its reference and checked against the row,
 * a chunk without one is read from the plan (its entries' gate masks say which gates select each case). Memory is
 * bounded: one page of chunk rows per execution database, the plan walk's index path, one receipt or chunk file (and
 * one output) at a time. Every attribute of a suite must precede its test cases, so the test cases are spooled, one
 * temporary file per gate (in a scratch directory under {@code java.io.tmpdir}, deleted at the end), while the run
 * is read once, and the document is written from the spools with each suite's counts: one consistent reading of the
 * run, and at most the report's size on disk. The document is written with the JDK's {@link XMLStreamWriter}, which
 * escapes markup; characters XML 1.0 forbids (control characters other than tab, line feed and carriage return,
 * unpaired surrogates, U+FFFE and U+FFFF) are removed, and in attributes tabs and line breaks become spaces. The
 * run's secret values are already masked in its receipts. Thread-safe.
 */
public final class JunitReport {
    /** Characters of an output quoted in a failure's or error's text. */
    static final int OUTPUT_EXCERPT = 4_000;

    private static final Duration READ = Duration.ofSeconds(120);
    /** The plan walk's allowance: its index reads are interleaved with the reading of every receipt. */
    private static final Duration WALK = Duration.ofHours(24);

    private static final byte PASSED = 0;
    private static final byte FAILURE = 1;
    private static final byte ERROR = 2;
    private static final byte SKIPPED = 3;

    /**
     * What {@link #write} wrote.
     *
     * @param chunks    done chunks read (receipts)
     * @param cases     executed cases read
     * @param gates     test suites (gates)
     * @param tests     test cases over every suite
     * @param failures  failed test cases
     * @param errors    errored test cases
     * @param skipped   skipped test cases (cases that never ran)
     */
    public record Summary(
            UUID runId, long chunks, long cases, int gates, long tests, long failures, long errors, long skipped) {}

    private final Placements placements;
    private final StorageConfig storage;
    private final Jdbi control;

    public JunitReport(Placements placements, StorageConfig storage) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.storage = Objects.requireNonNull(storage, "storage");
        this.control = placements.control();
    }

    /**
     * Writes the run's JUnit XML report to {@code out} (UTF-8; flushed, not closed). A run whose plan was never
     * published has no gates: an empty {@code <testsuites>}.
     *
     * @throws NotFoundException     no such run
     * @throws InvalidInputException the storage configuration does not resolve the run's store
     * @throws DamagedException      a receipt, output or plan file is missing or differs from its reference or row
     * @throws UnavailableException  an execution database, the store or the scratch directory fails
     */
    public Summary write(UUID runId, OutputStream out) {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(out, "out");
        RunRecords.Run run = control.withHandle(h -> RunRecords.run(h, runId));
        PlanRecord record =
                control.withHandle(h -> PlanRecord.find(h, runId)).orElseThrow(() -> RunRecords.notFound(runId));
        if (record.root().isEmpty()) {
            writeDocument(runId, List.of(), out);
            return new Summary(runId, 0, 0, 0, 0, 0, 0, 0);
        }
        List<RunRecords.Route> routes = control.withHandle(h -> RunRecords.routes(h, runId, ""));
        Path scratch = null;
        try (ObjectStore store = ObjectStores.open(record.store(storage))) {
            PublishedPlan plan = record.plan(store, READ);
            List<GateFile> gateFiles = plan.gates(Deadline.after(READ));
            scratch = Files.createTempDirectory("vigilo-junit-");
            List<Suite> suites = new ArrayList<>();
            try {
                for (GateFile g : gateFiles) {
                    suites.add(new Suite(g, scratch.resolve("gate-" + g.gateIndex())));
                }
                long[] read = spool(run, plan, store, routes, suites);
                for (Suite s : suites) {
                    s.spool.close();
                    if (s.tests != s.gate.selectedCases()) {
                        throw new DamagedException("run " + runId + ": the plan's chunks select " + s.tests
                                + " cases for gate " + s.gate.gate().name() + ", its gate file says "
                                + s.gate.selectedCases() + "; the plan files are inconsistent");
                    }
                }
                writeDocument(runId, suites, out);
                long tests = 0;
                long failures = 0;
                long errors = 0;
                long skipped = 0;
                for (Suite s : suites) {
                    tests += s.tests;
                    failures += s.failures;
                    errors += s.errors;
                    skipped += s.skipped;
                }
                return new Summary(runId, read[0], read[1], suites.size(), tests, failures, errors, skipped);
            } finally {
                for (Suite s : suites) {
                    s.closeQuietly();
                }
            }
        } catch (IOException e) {
            throw new UnavailableException(
                    "cannot spool the JUnit report of run " + runId + " in a temporary directory ("
                            + System.getProperty("java.io.tmpdir") + "): " + e.getMessage() + "; free space there or"
                            + " set java.io.tmpdir (JAVA_TOOL_OPTIONS=-Djava.io.tmpdir=DIR)",
                    e);
        } finally {
            ScratchDirs.delete(scratch);
        }
    }

    /** One gate's suite: its counts so far and the spool of its test cases. */
    private static final class Suite {
        final GateFile gate;
        final Path file;
        final DataOutputStream spool;
        long tests;
        long failures;
        long errors;
        long skipped;
        long millis;

        Suite(GateFile gate, Path file) throws IOException {
            this.gate = gate;
            this.file = file;
            this.spool = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file), 16 * 1024));
        }

        void add(byte kind, String caseId, long caseMillis, String message, String type, String detail)
                throws IOException {
            tests++;
            switch (kind) {
                case FAILURE -> failures++;
                case ERROR -> errors++;
                case SKIPPED -> skipped++;
                default -> {}
            }
            millis += caseMillis;
            // Cleaned before spooling: UTF-8 would turn an unpaired surrogate into '?'.
            spool.writeByte(kind);
            writeString(spool, xmlText(caseId));
            spool.writeLong(caseMillis);
            writeString(spool, xmlText(message));
            writeString(spool, xmlText(type));
            writeString(spool, xmlText(detail));
        }

        void closeQuietly() {
            try {
                spool.close();
            } catch (IOException e) {
                // the scratch directory is deleted anyway
            }
        }
    }

    /**
     * Reads the run once, in chunk order, into the suites' spools: the plan's chunks merged with the run's chunk rows.
     *
     * @return done chunks and executed cases read
     */
    private long[] spool(
            RunRecords.Run run,
            PublishedPlan plan,
            ObjectStore store,
            List<RunRecords.Route> routes,
            List<Suite> suites)
            throws IOException {
        UUID runId = run.runId();
        Iterator<ChunkRows.Row> rows = ChunkRows.cursor(placements, runId, routes, false);
        long[] read = new long[2];
        ChunkRows.Row[] next = {rows.hasNext() ? rows.next() : null};
        IOException[] failed = {null};
        plan.forEachChunk(0, Deadline.after(WALK), ref -> {
            try {
                ChunkRows.Row row = null;
                if (next[0] != null && next[0].chunkIndex() == ref.chunkIndex()) {
                    row = next[0];
                    next[0] = rows.hasNext() ? rows.next() : null;
                } else if (next[0] != null && next[0].chunkIndex() < ref.chunkIndex()) {
                    throw new DamagedException("run " + runId + ": its execution records hold chunk "
                            + next[0].chunkIndex() + ", which the plan's chunk index does not list; the execution"
                            + " records were altered");
                }
                if (row != null && row.done()) {
                    Receipt r = ChunkRows.receipt(runId, store, row);
                    for (Receipt.CaseResult c : r.cases()) {
                        executed(store, row, c, suites);
                    }
                    read[0]++;
                    read[1] += r.cases().size();
                } else {
                    ChunkFile chunk = PublishedPlan.readChunk(runId, ref, store, Deadline.after(READ));
                    String why = whyNotRun(run, ref.chunkIndex(), Optional.ofNullable(row));
                    String message = ended(run) ? "never ran" : "not run yet";
                    for (ChunkFile.Entry e : chunk.cases()) {
                        for (Suite s : suites) {
                            if ((e.gates() & (1L << s.gate.gateIndex())) != 0) {
                                s.add(SKIPPED, e.id(), 0, message, "", why);
                            }
                        }
                    }
                }
                return true;
            } catch (IOException e) {
                failed[0] = e;
                return false;
            }
        });
        if (failed[0] != null) {
            throw failed[0];
        }
        if (next[0] != null) {
            throw new DamagedException("run " + runId + ": its execution records hold chunk " + next[0].chunkIndex()
                    + ", which the plan's chunk index does not list; the execution records were altered");
        }
        return read;
    }

    /** Whether the run ended (settled, failed or cancelled): a case without a result then never ran. */
    private static boolean ended(RunRecords.Run run) {
        return RunLifecycle.TERMINAL.contains(run.status());
    }

    /** Why a chunk's cases have no result: its row's state (and last error), or the run's status. */
    private static String whyNotRun(RunRecords.Run run, long chunkIndex, Optional<ChunkRows.Row> row) {
        StringBuilder b = new StringBuilder("chunk ").append(chunkIndex);
        if (row.isEmpty()) {
            b.append(ended(run) ? " was never admitted for execution" : " is not admitted yet");
        } else if ("failed".equals(row.get().state())) {
            b.append(" failed");
            row.get().lastError().ifPresent(e -> b.append(": ").append(e));
        } else {
            b.append(" is ").append(row.get().state());
        }
        b.append("; the run is ").append(run.status().spelling());
        if (row.isEmpty() || !"failed".equals(row.get().state())) {
            run.failureReason().ifPresent(f -> b.append(" (").append(f).append(')'));
        }
        return b.toString();
    }

    /** One executed case: a test case in every suite whose gate selects it. */
    private static void executed(ObjectStore store, ChunkRows.Row row, Receipt.CaseResult c, List<Suite> suites)
            throws IOException {
        long millis = c.agentMillis();
        for (Receipt.EvaluatorResult e : c.evaluatorResults()) {
            millis += e.millis();
        }
        String output = null;
        for (Suite s : suites) {
            Receipt.GateOutcome o = c.gates().get(s.gate.gate().name());
            if (o == null) {
                continue;
            }
            if (o == Receipt.GateOutcome.PASSED) {
                s.add(PASSED, c.id(), millis, "", "", "");
                continue;
            }
            if (output == null) {
                output = excerpt(store, c);
            }
            List<String> required = s.gate.gate().requiredEvaluators();
            List<String> reasons = new ArrayList<>();
            String type;
            if (o == Receipt.GateOutcome.FAILED) {
                type = "failed";
                for (Receipt.EvaluatorResult e : c.evaluatorResults()) {
                    if (required.contains(e.name()) && !e.passed()) {
                        reasons.add(e.name() + " failed (score " + score(e.score()) + ")"
                                + e.error()
                                        .map(x -> ": " + x.type() + ": " + x.message())
                                        .orElse(""));
                    }
                }
            } else if (c.error().isPresent()) {
                type = c.error().get().type();
                reasons.add("agent errored (" + type + "): " + c.error().get().message());
            } else {
                type = null;
                for (Receipt.EvaluatorResult e : c.evaluatorResults()) {
                    if (required.contains(e.name()) && e.error().isPresent()) {
                        type = type == null ? e.error().get().type() : type;
                        reasons.add(e.name() + " errored (" + e.error().get().type() + "): "
                                + e.error().get().message());
                    }
                }
                type = type == null ? "errored" : type;
            }
            String message =
                    reasons.isEmpty() ? "gate " + s.gate.gate().name() + " " + o.wire : String.join("; ", reasons);
            if (!c.epochs().isEmpty()) {
                // The testcase is the reduced case; how many epochs passed says how near it was.
                message += " (" + c.epochPasses().get(s.gate.gate().name()) + " of "
                        + c.epochs().size() + " epochs passed)";
            }
            s.add(
                    o == Receipt.GateOutcome.FAILED ? FAILURE : ERROR,
                    c.id(),
                    millis,
                    message,
                    type,
                    detail(row, c, required, output));
        }
    }

    /** The text of a failure or error: where the case ran, the gate's evaluators' results, and its output. */
    private static String detail(ChunkRows.Row row, Receipt.CaseResult c, List<String> required, String output) {
        StringBuilder b = new StringBuilder();
        b.append("case ")
                .append(c.id())
                .append(" (ordinal ")
                .append(c.ordinal())
                .append(", shard ")
                .append(row.seed().shard())
                .append(", chunk ")
                .append(row.chunkIndex())
                .append("), ")
                .append(c.attempts())
                .append(c.attempts() == 1 ? " attempt" : " attempts")
                .append('\n');
        c.error()
                .ifPresent(e -> b.append("agent: ")
                        .append(e.type())
                        .append(": ")
                        .append(e.message())
                        .append('\n'));
        for (Receipt.EvaluatorResult e : c.evaluatorResults()) {
            if (!required.contains(e.name())) {
                continue;
            }
            b.append(e.name())
                    .append(": ")
                    .append(e.passed() ? "passed" : "failed")
                    .append(", score ")
                    .append(score(e.score()));
            e.error()
                    .ifPresent(x ->
                            b.append(", error ").append(x.type()).append(": ").append(x.message()));
            b.append('\n');
        }
        if (!output.isEmpty() || c.outputSha256().isPresent()) {
            b.append("output:\n").append(output).append('\n');
        }
        return b.toString();
    }

    /** The case's output (read and verified when stored apart), cut to {@link #OUTPUT_EXCERPT} characters. */
    private static String excerpt(ObjectStore store, Receipt.CaseResult c) {
        String text;
        if (c.output().isPresent()) {
            text = c.output().get();
        } else if (c.outputRef().isPresent()) {
            text = RunResults.output(store, c);
        } else {
            return "";
        }
        if (text.length() <= OUTPUT_EXCERPT) {
            return text;
        }
        int end = OUTPUT_EXCERPT;
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(0, end) + "\n... (" + (text.length() - end) + " more characters; vigilo run results shows"
                + " the whole output)";
    }

    private static String score(double score) {
        return Double.toString(score);
    }

    /** The document: the totals, each suite's counts, then its spooled test cases. */
    private static void writeDocument(UUID runId, List<Suite> suites, OutputStream out) {
        long tests = 0;
        long failures = 0;
        long errors = 0;
        long skipped = 0;
        long millis = 0;
        for (Suite s : suites) {
            tests += s.tests;
            failures += s.failures;
            errors += s.errors;
            skipped += s.skipped;
            millis += s.millis;
        }
        try {
            XMLStreamWriter x = XMLOutputFactory.newDefaultFactory().createXMLStreamWriter(out, "UTF-8");
            x.writeStartDocument("UTF-8", "1.0");
            x.writeCharacters("\n");
            x.writeStartElement("testsuites");
            attribute(x, "name", "vigilo run " + runId);
            counts(x, tests, failures, errors, skipped, millis);
            x.writeCharacters("\n");
            for (Suite s : suites) {
                String gate = s.gate.gate().name();
                x.writeCharacters("  ");
                x.writeStartElement("testsuite");
                attribute(x, "name", gate);
                counts(x, s.tests, s.failures, s.errors, s.skipped, s.millis);
                x.writeCharacters("\n");
                try (DataInputStream in =
                        new DataInputStream(new BufferedInputStream(Files.newInputStream(s.file), 16 * 1024))) {
                    for (long i = 0; i < s.tests; i++) {
                        testcase(x, gate, in);
                    }
                }
                x.writeCharacters("  ");
                x.writeEndElement();
                x.writeCharacters("\n");
            }
            x.writeEndElement();
            x.writeCharacters("\n");
            x.writeEndDocument();
            x.flush();
            x.close();
            out.flush();
        } catch (XMLStreamException e) {
            if (e.getCause() instanceof IOException io) {
                throw new UncheckedIOException(
                        "writing the JUnit report of run " + runId + " failed: " + io.getMessage(), io);
            }
            throw new IllegalStateException(
                    "writing the JUnit report of run " + runId + " failed: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "writing the JUnit report of run " + runId + " failed: " + e.getMessage(), e);
        }
    }

    private static void testcase(XMLStreamWriter x, String gate, DataInputStream in)
            throws IOException, XMLStreamException {
        byte kind = in.readByte();
        String caseId = readString(in);
        long millis = in.readLong();
        String message = readString(in);
        String type = readString(in);
        String detail = readString(in);
        x.writeCharacters("    ");
        if (kind == PASSED) {
            x.writeEmptyElement("testcase");
        } else {
            x.writeStartElement("testcase");
        }
        attribute(x, "name", caseId);
        attribute(x, "classname", gate);
        x.writeAttribute("time", seconds(millis));
        if (kind != PASSED) {
            x.writeCharacters("\n      ");
            String element = kind == FAILURE ? "failure" : kind == ERROR ? "error" : "skipped";
            x.writeStartElement(element);
            attribute(x, "message", message);
            if (!type.isEmpty()) {
                attribute(x, "type", type);
            }
            text(x, detail);
            x.writeEndElement();
            x.writeCharacters("\n    ");
            x.writeEndElement();
        }
        x.writeCharacters("\n");
    }

    private static void counts(XMLStreamWriter x, long tests, long failures, long errors, long skipped, long millis)
            throws XMLStreamException {
        x.writeAttribute("tests", Long.toString(tests));
        x.writeAttribute("failures", Long.toString(failures));
        x.writeAttribute("errors", Long.toString(errors));
        x.writeAttribute("skipped", Long.toString(skipped));
        x.writeAttribute("time", seconds(millis));
    }

    /** Milliseconds as seconds with three decimals, in the format every reader parses. */
    static String seconds(long millis) {
        return String.format(Locale.ROOT, "%d.%03d", millis / 1000, millis % 1000);
    }

    private static void attribute(XMLStreamWriter x, String name, String value) throws XMLStreamException {
        x.writeAttribute(name, attributeText(value));
    }

    private static void text(XMLStreamWriter x, String value) throws XMLStreamException {
        x.writeCharacters(xmlText(value));
    }

    /** {@link #xmlText} on one line: tabs and line breaks become spaces (as an XML reader would normalize them). */
    static String attributeText(String s) {
        String t = xmlText(s);
        StringBuilder b = null;
        for (int i = 0; i < t.length(); i++) {
            char ch = t.charAt(i);
            if (ch == '\t' || ch == '\n' || ch == '\r') {
                if (b == null) {
                    b = new StringBuilder(t);
                }
                b.setCharAt(i, ' ');
            }
        }
        return b == null ? t : b.toString();
    }

    /**
     * {@code s} without the characters XML 1.0 forbids: every control character but tab, line feed and carriage
     * return, unpaired surrogates, U+FFFE and U+FFFF (what a document may hold: #x9 | #xA | #xD | [#x20-#xD7FF] |
     * [#xE000-#xFFFD] | [#x10000-#x10FFFF]).
     */
    static String xmlText(String s) {
        StringBuilder b = null;
        int i = 0;
        while (i < s.length()) {
            int cp = s.codePointAt(i);
            int n = Character.charCount(cp);
            boolean allowed = cp == 0x9
                    || cp == 0xA
                    || cp == 0xD
                    || (cp >= 0x20 && cp <= 0xD7FF)
                    || (cp >= 0xE000 && cp <= 0xFFFD)
                    || (cp >= 0x10000 && cp <= 0x10FFFF);
            if (!allowed && b == null) {
                b = new StringBuilder(s.length()).append(s, 0, i);
            } else if (allowed && b != null) {
                b.appendCodePoint(cp);
            }
            i += n;
        }
        return b == null ? s : b.toString();
    }

    static void writeString(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    static String readString(DataInputStream in) throws IOException {
        int n = in.readInt();
        byte[] b = in.readNBytes(n);
        if (b.length != n) {
            throw new EOFException();
        }
        return new String(b, StandardCharsets.UTF_8);
    }
}
