package dev.vigilo.exec.view;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.ScratchDirs;
import dev.vigilo.exec.record.PlanRecord;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.stats.Confidence;
import dev.vigilo.stats.McNemar;
import dev.vigilo.stats.PairedDifference;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * {@code vigilo run compare RUN_A RUN_B}: per gate, the two runs' pass rates and their difference, then every case
 * whose outcome changed, matched by case id (docs/execution.md, "Comparison").
 *
 * <p>Both runs' executed cases are streamed from their receipts ({@link CaseOutcomes}). Runs over the same dataset
 * (same upload id, so the same ids at the same ordinals) are merged by ordinal. Runs over different datasets are each
 * sorted by case id on disk ({@link ExternalIdSort}) and merged by id; cases only one of them executed are counted.
 * Memory is bounded whatever the runs' sizes: one page of chunk rows per execution database, one receipt, and the
 * sort's budget ({@value ExternalIdSort#DEFAULT_BUDGET} bytes) per run being sorted. Thread-safe.
 */
public final class RunComparison {
    /** How a case's outcome under one gate changed from run A to run B. */
    public enum Change {
        /** A passed, B failed. */
        PASS_TO_FAIL("pass_to_fail"),
        /** A failed or errored, B passed. */
        FAIL_TO_PASS("fail_to_pass"),
        /** A passed or failed, B errored. */
        NEWLY_ERRORED("newly_errored"),
        /** A errored, B failed. */
        ERROR_TO_FAIL("error_to_fail");

        private final String wire;

        Change(String wire) {
            this.wire = wire;
        }

        /** The stable name printed by {@code run compare} ({@code pass_to_fail}, ...). */
        public String wire() {
            return wire;
        }
    }

    /**
     * One gate in both runs: its row of each run's gate table (empty when that run has no gate of this name).
     * Rows are final for settled (or failed) runs and partial while a run executes.
     */
    public record GateComparison(String name, Optional<GateResult> a, Optional<GateResult> b) {
        /** {@code pass_rate(B) - pass_rate(A)}, when both runs have the gate. */
        public Optional<Double> difference() {
            return a.isPresent() && b.isPresent()
                    ? Optional.of(b.get().passRate() - a.get().passRate())
                    : Optional.empty();
        }
    }

    /**
     * What is compared, known before any case is read.
     *
     * @param sameDataset whether both runs are over the same dataset upload (cases are then merged by ordinal)
     * @param gates       the gates of run A in order, then those only run B has
     */
    public record Header(
            UUID runA,
            UUID runB,
            String statusA,
            String statusB,
            UUID datasetA,
            UUID datasetB,
            boolean sameDataset,
            List<GateComparison> gates) {
        public Header {
            gates = List.copyOf(gates);
        }
    }

    /** One gate's changed outcome ({@code passed}, {@code failed} or {@code errored} in each run). */
    public record GateChange(String gate, String a, String b, Change change) {}

    /**
     * A case whose outcome changed under at least one gate both runs have.
     *
     * @param ordinalA the case's ordinal in run A's dataset
     * @param ordinalB the case's ordinal in run B's dataset
     */
    public record Flip(String caseId, long ordinalA, long ordinalB, List<GateChange> changes) {
        public Flip {
            changes = List.copyOf(changes);
        }
    }

    /**
     * Whether one gate's pass rate differs between the runs, over the cases both runs executed and the gate selects
     * in both (paired: each case is its own control), with a case counted passed only when it passed (a failed or
     * errored case did not). The exact two-sided McNemar test over the discordant cases and the difference of the
     * paired pass rates, B - A, with Newcombe's method 10 interval, both at the confidence of run A's gate
     * (docs/execution.md, "Statistics").
     *
     * @param gate        the gate's name
     * @param mcNemar     the discordant counts ({@code a_only}: passed in A only; {@code b_only}: in B only) and the
     *                    p-value
     * @param difference  B - A over the paired cases with its interval
     * @param significant whether {@code p_value < 1 - confidence}
     */
    public record GateSignificance(String gate, McNemar mcNemar, PairedDifference difference, boolean significant) {
        static GateSignificance of(String gate, long[] table, Confidence confidence) {
            McNemar test = McNemar.test(table[1], table[2]);
            return new GateSignificance(
                    gate,
                    test,
                    PairedDifference.newcombe(table[0], table[1], table[2], table[3], confidence),
                    test.significant(confidence));
        }

        /** Cases both runs executed and the gate selects in both. */
        public long paired() {
            return difference.both() + difference.aOnly() + difference.bOnly() + difference.neither();
        }

        /**
         * Adds the keys {@code run compare --json} and the dashboard's compare API give per gate, in this order:
         * {@code a_only}, {@code b_only}, {@code p_value}, {@code paired}, {@code paired_difference}, {@code
         * difference_ci_low}, {@code difference_ci_high}, {@code confidence}, {@code significant}; each null when
         * {@code significance} is empty (one run lacks the gate).
         */
        public static void addTo(ObjectNode n, Optional<GateSignificance> significance) {
            if (significance.isEmpty()) {
                for (String k : List.of(
                        "a_only",
                        "b_only",
                        "p_value",
                        "paired",
                        "paired_difference",
                        "difference_ci_low",
                        "difference_ci_high",
                        "confidence",
                        "significant")) {
                    n.putNull(k);
                }
                return;
            }
            GateSignificance x = significance.get();
            PairedDifference d = x.difference();
            n.put("a_only", x.mcNemar().aOnly())
                    .put("b_only", x.mcNemar().bOnly())
                    .put("p_value", x.mcNemar().pValue())
                    .put("paired", x.paired())
                    .put("paired_difference", d.difference())
                    .put("difference_ci_low", d.low())
                    .put("difference_ci_high", d.high())
                    .put("confidence", d.confidence().level())
                    .put("significant", x.significant());
        }
    }

    /**
     * The counts over the executed cases.
     *
     * @param compared     cases both runs executed (matched by id)
     * @param onlyInA      cases run A executed and run B did not (not in its dataset, or not executed)
     * @param onlyInB      likewise for run B
     * @param flipped      compared cases with at least one changed gate outcome
     * @param changes      per kind of change, the cases showing it under at least one gate
     * @param complete     whether every case of both runs was read; false when the listener ended the comparison
     *                     early ({@link Listener#enough()}): the counts are then those of the cases read until then
     * @param significance per gate both runs have (run A's order), the paired test of its pass rates
     */
    public record Summary(
            long compared,
            long onlyInA,
            long onlyInB,
            long flipped,
            Map<Change, Long> changes,
            boolean complete,
            List<GateSignificance> significance) {
        public Summary {
            changes = Collections.unmodifiableMap(new LinkedHashMap<>(changes));
            significance = List.copyOf(significance);
        }

        /** The significance of the gate named {@code gate}, when both runs have it. */
        public Optional<GateSignificance> significance(String gate) {
            return significance.stream().filter(s -> s.gate().equals(gate)).findFirst();
        }
    }

    /** Receives the comparison as it is made. Called on the comparing thread. */
    public interface Listener {
        /** Called once, first. */
        void start(Header header);

        /** Called for every flipped case: in ordinal order (same dataset) or case id order. */
        void flip(Flip flip);

        /**
         * Asked after every flip: true ends the comparison there (a viewer that has the page of flips it wants), and
         * the summary is then not {@link Summary#complete() complete}. By default every case is read.
         */
        default boolean enough() {
            return false;
        }
    }

    /** How {@link #writeFlips} writes the flipped cases. */
    public enum FlipFormat {
        /**
         * One JSON object per flipped case: {@code case_id}, {@code ordinal_a}, {@code ordinal_b}, {@code changes}
         * ({@code [{gate, a, b, change}]}, one per changed gate).
         */
        JSONL,
        /** CSV with a header row of {@link #FLIP_CSV_COLUMNS}: one row per changed gate of a flipped case. */
        CSV
    }

    /** The CSV columns of the flipped cases, in order. */
    public static final List<String> FLIP_CSV_COLUMNS =
            List.of("case_id", "ordinal_a", "ordinal_b", "gate", "a", "b", "change");

    /**
     * Writes every flipped case of the comparison of {@code runA} with {@code runB} to {@code out} (UTF-8, flushed,
     * not closed), in the comparison's order, streamed: what the dashboard's compare downloads and {@code vigilo run
     * compare --flips} write.
     *
     * @return the comparison's summary (its {@code flipped} is the number of cases written)
     */
    public Summary writeFlips(UUID runA, UUID runB, java.io.OutputStream out, FlipFormat format) {
        Objects.requireNonNull(out, "out");
        Objects.requireNonNull(format, "format");
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        com.fasterxml.jackson.dataformat.csv.CsvMapper csvMapper = new com.fasterxml.jackson.dataformat.csv.CsvMapper();
        try (java.io.Writer w = new java.io.BufferedWriter(new java.io.OutputStreamWriter(
                        new java.io.FilterOutputStream(out) {
                            @Override
                            public void close() throws IOException {
                                flush(); // the caller's stream stays open
                            }
                        },
                        java.nio.charset.StandardCharsets.UTF_8));
                com.fasterxml.jackson.databind.SequenceWriter rows = format == FlipFormat.CSV
                        ? csvMapper
                                .writerFor(List.class)
                                .with(com.fasterxml.jackson.dataformat.csv.CsvSchema.builder()
                                        .addColumns(
                                                FLIP_CSV_COLUMNS,
                                                com.fasterxml.jackson.dataformat.csv.CsvSchema.ColumnType.STRING)
                                        .setUseHeader(false)
                                        .build())
                                .without(com.fasterxml.jackson.core.JsonGenerator.Feature.AUTO_CLOSE_TARGET)
                                .writeValues(w)
                        : null) {
            if (rows != null) {
                // The header row even when nothing flipped (the CSV writer would write it only with a first row).
                w.write(String.join(",", FLIP_CSV_COLUMNS) + "\r\n");
            }
            Summary s = compare(runA, runB, new Listener() {
                @Override
                public void start(Header header) {}

                @Override
                public void flip(Flip f) {
                    try {
                        if (rows != null) {
                            for (GateChange c : f.changes()) {
                                rows.write(List.of(
                                        f.caseId(),
                                        Long.toString(f.ordinalA()),
                                        Long.toString(f.ordinalB()),
                                        c.gate(),
                                        c.a(),
                                        c.b(),
                                        c.change().wire()));
                            }
                        } else {
                            ObjectNode n = mapper.createObjectNode()
                                    .put("case_id", f.caseId())
                                    .put("ordinal_a", f.ordinalA())
                                    .put("ordinal_b", f.ordinalB());
                            com.fasterxml.jackson.databind.node.ArrayNode changes = n.putArray("changes");
                            for (GateChange c : f.changes()) {
                                changes.addObject()
                                        .put("gate", c.gate())
                                        .put("a", c.a())
                                        .put("b", c.b())
                                        .put("change", c.change().wire());
                            }
                            w.write(mapper.writeValueAsString(n));
                            w.write('\n');
                        }
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }
            });
            if (rows != null) {
                rows.flush();
            }
            return s;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(
                    "writing the flipped cases of runs " + runA + " and " + runB + " failed: " + e.getMessage(), e);
        }
    }

    private final Placements placements;
    private final StorageConfig storage;
    private final Jdbi control;
    private final long sortBudget;

    public RunComparison(Placements placements, StorageConfig storage) {
        this(placements, storage, ExternalIdSort.DEFAULT_BUDGET);
    }

    RunComparison(Placements placements, StorageConfig storage, long sortBudget) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.storage = Objects.requireNonNull(storage, "storage");
        this.control = placements.control();
        this.sortBudget = sortBudget;
    }

    /**
     * Compares run A with run B.
     *
     * @throws NotFoundException     either run does not exist
     * @throws InvalidInputException the storage configuration does not resolve a run's store
     * @throws DamagedException      a receipt is missing or differs from its reference or row
     * @throws UnavailableException  an execution database, the store or the scratch directory fails
     */
    public Summary compare(UUID runA, UUID runB, Listener listener) {
        Objects.requireNonNull(runA, "runA");
        Objects.requireNonNull(runB, "runB");
        Objects.requireNonNull(listener, "listener");
        PlanRecord a = control.withHandle(h -> PlanRecord.find(h, runA)).orElseThrow(() -> RunRecords.notFound(runA));
        PlanRecord b = control.withHandle(h -> PlanRecord.find(h, runB)).orElseThrow(() -> RunRecords.notFound(runB));
        ExecutionStatusReader status = new ExecutionStatusReader(placements);
        ExecutionStatus sa = status.status(runA);
        ExecutionStatus sb = status.status(runB);
        boolean same = a.datasetUploadId().equals(b.datasetUploadId());
        List<GateComparison> gates = gates(sa.gates(), sb.gates());
        listener.start(new Header(
                runA, runB, sa.status(), sb.status(), a.datasetUploadId(), b.datasetUploadId(), same, gates));
        List<RunRecords.Route> routesA = control.withHandle(h -> RunRecords.routes(h, runA, ""));
        List<RunRecords.Route> routesB = control.withHandle(h -> RunRecords.routes(h, runB, ""));
        Path scratch = null;
        try (ObjectStore storeA = ObjectStores.open(a.store(storage));
                ObjectStore storeB = ObjectStores.open(b.store(storage))) {
            CaseOutcomes ca = new CaseOutcomes(placements, runA, routesA, storeA);
            CaseOutcomes cb = new CaseOutcomes(placements, runB, routesB, storeB);
            if (same) {
                return merge(ca, cb, ca, cb, Comparator.comparingLong(CaseOutcome::ordinal), gates, listener);
            }
            scratch = Files.createTempDirectory("vigilo-compare-");
            try (ExternalIdSort sortedA = ExternalIdSort.sort(ca, scratch, sortBudget);
                    ExternalIdSort sortedB = ExternalIdSort.sort(cb, scratch, sortBudget)) {
                return merge(sortedA, sortedB, ca, cb, Comparator.comparing(CaseOutcome::id), gates, listener);
            }
        } catch (IOException e) {
            throw new UnavailableException(
                    "cannot create a temporary directory to sort the runs' cases: " + e.getMessage(), e);
        } finally {
            ScratchDirs.delete(scratch);
        }
    }

    /** Gate rows matched by name: run A's gates in order, then run B's other gates. */
    static List<GateComparison> gates(List<GateResult> a, List<GateResult> b) {
        Map<String, GateResult> byName = new LinkedHashMap<>();
        b.forEach(g -> byName.put(g.name(), g));
        List<GateComparison> out = new ArrayList<>();
        for (GateResult g : a) {
            out.add(new GateComparison(g.name(), Optional.of(g), Optional.ofNullable(byName.remove(g.name()))));
        }
        byName.values().forEach(g -> out.add(new GateComparison(g.name(), Optional.empty(), Optional.of(g))));
        return out;
    }

    /** Merge-join of two streams ordered by {@code order}; the gate names come from the case streams. */
    private static Summary merge(
            Iterator<CaseOutcome> a,
            Iterator<CaseOutcome> b,
            CaseOutcomes gatesA,
            CaseOutcomes gatesB,
            Comparator<CaseOutcome> order,
            List<GateComparison> gates,
            Listener listener) {
        long compared = 0;
        long onlyA = 0;
        long onlyB = 0;
        long flipped = 0;
        Map<Change, Long> changes = new LinkedHashMap<>();
        for (Change c : Change.values()) {
            changes.put(c, 0L);
        }
        CaseOutcome x = a.hasNext() ? a.next() : null;
        CaseOutcome y = b.hasNext() ? b.next() : null;
        int[] gateMap = null;
        long[][] tables = null;
        while (x != null || y != null) {
            int cmp = x == null ? 1 : y == null ? -1 : order.compare(x, y);
            if (cmp < 0 || (cmp == 0 && !x.id().equals(y.id()))) {
                // same ordinal but another id cannot happen over one dataset; count both sides apart if it does
                onlyA++;
                x = a.hasNext() ? a.next() : null;
                if (cmp == 0) {
                    onlyB++;
                    y = b.hasNext() ? b.next() : null;
                }
                continue;
            }
            if (cmp > 0) {
                onlyB++;
                y = b.hasNext() ? b.next() : null;
                continue;
            }
            compared++;
            if (gateMap == null) {
                gateMap = gateMap(gatesA.gates(), gatesB.gates());
                tables = new long[gateMap.length][4];
            }
            pair(gateMap, tables, x, y);
            List<GateChange> diff = diff(gatesA.gates(), gateMap, x, y);
            if (!diff.isEmpty()) {
                flipped++;
                diff.stream().map(GateChange::change).distinct().forEach(c -> changes.merge(c, 1L, Long::sum));
                listener.flip(new Flip(x.id(), x.ordinal(), y.ordinal(), diff));
                if (listener.enough()) {
                    return new Summary(
                            compared, onlyA, onlyB, flipped, changes, false, significance(gates, gatesA, tables));
                }
            }
            x = a.hasNext() ? a.next() : null;
            y = b.hasNext() ? b.next() : null;
        }
        return new Summary(compared, onlyA, onlyB, flipped, changes, true, significance(gates, gatesA, tables));
    }

    /**
     * Adds one compared case to each gate's 2x2 table (both passed, A only, B only, neither), for the gates that
     * select it in both runs.
     */
    private static void pair(int[] gateMap, long[][] tables, CaseOutcome x, CaseOutcome y) {
        for (int i = 0; i < gateMap.length && i < x.gates().length; i++) {
            int j = gateMap[i];
            if (j < 0 || j >= y.gates().length) {
                continue;
            }
            byte oa = x.gates()[i];
            byte ob = y.gates()[j];
            if (oa == CaseOutcome.NOT_SELECTED || ob == CaseOutcome.NOT_SELECTED) {
                continue;
            }
            boolean pa = oa == CaseOutcome.PASSED;
            boolean pb = ob == CaseOutcome.PASSED;
            tables[i][pa ? (pb ? 0 : 1) : (pb ? 2 : 3)]++;
        }
    }

    /**
     * Per gate both runs have, in run A's order: the paired test over its table (an empty table when no case was
     * compared), at the confidence of run A's gate.
     */
    private static List<GateSignificance> significance(
            List<GateComparison> gates, CaseOutcomes gatesA, long[][] tables) {
        List<GateSignificance> out = new ArrayList<>();
        for (GateComparison g : gates) {
            if (g.a().isEmpty() || g.b().isEmpty()) {
                continue;
            }
            int i = gatesA.gates().indexOf(g.name());
            long[] table = tables != null && i >= 0 && i < tables.length ? tables[i] : new long[4];
            out.add(GateSignificance.of(g.name(), table, g.a().get().confidence()));
        }
        return out;
    }

    /** For each gate of run A, its index among run B's gates, or -1. */
    private static int[] gateMap(List<String> a, List<String> b) {
        int[] map = new int[a.size()];
        for (int i = 0; i < a.size(); i++) {
            map[i] = b.indexOf(a.get(i));
        }
        return map;
    }

    private static List<GateChange> diff(List<String> gatesA, int[] gateMap, CaseOutcome x, CaseOutcome y) {
        List<GateChange> out = new ArrayList<>();
        for (int i = 0; i < gateMap.length && i < x.gates().length; i++) {
            int j = gateMap[i];
            if (j < 0 || j >= y.gates().length) {
                continue;
            }
            byte oa = x.gates()[i];
            byte ob = y.gates()[j];
            Change c = change(oa, ob);
            if (c != null) {
                out.add(new GateChange(gatesA.get(i), CaseOutcome.wire(oa), CaseOutcome.wire(ob), c));
            }
        }
        return out;
    }

    /** The kind of change from {@code a} to {@code b}, or null when there is none (or a gate does not select it). */
    static Change change(byte a, byte b) {
        if (a == b || a == CaseOutcome.NOT_SELECTED || b == CaseOutcome.NOT_SELECTED) {
            return null;
        }
        if (b == CaseOutcome.ERRORED) {
            return Change.NEWLY_ERRORED;
        }
        if (b == CaseOutcome.PASSED) {
            return Change.FAIL_TO_PASS;
        }
        return a == CaseOutcome.PASSED ? Change.PASS_TO_FAIL : Change.ERROR_TO_FAIL;
    }
}
