package dev.vigilo.web;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.Names;
import dev.vigilo.exec.view.CaseResults;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.UUID;

/**
 * The results explorer's index of one run (docs/web.md, "The results explorer"): every executed case's outcome, gate
 * and evaluator results, scores, error type, attempts, epochs, agent time, tokens, cost, group and tags, and the first
 * {@value #TEXT_BYTES} bytes of its id, input, expected value, output and reason, held in columns (primitive arrays
 * and one byte arena per text column) so 100,000 cases take tens of MiB rather than a receipt read per request.
 *
 * <p>Immutable once built; thread-safe. Positions are the executed cases in ordinal order. A query filters every
 * position (a linear pass: text search is a case-insensitive byte search over the kept prefixes) and sorts what
 * matches, so a deep page costs what page 1 costs; {@link Page#nextAfter()} is a keyset cursor, the ordinal of the
 * page's last case, from which the next page continues in the query's order.
 */
final class CaseIndex {
    /** Bytes of each text column kept per case (cut at a character boundary). */
    static final int TEXT_BYTES = 200;

    /** What a list is sorted by. */
    enum Sort {
        ORDINAL,
        SCORE,
        TIME,
        TOKENS,
        COST;

        String spelling() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Sort parse(String text) {
            for (Sort s : values()) {
                if (s.spelling().equals(text)) {
                    return s;
                }
            }
            throw new InvalidInputException("sort " + Names.quote(text) + " is not a sort order; use ordinal, score,"
                    + " time, tokens or cost");
        }
    }

    /**
     * A list's filters and order. With an evaluator the outcome is that evaluator's result (cases it did not score are
     * left out) and the score is its score; otherwise with a gate the outcome is that gate's (cases it does not select
     * are left out); otherwise the case's. The score of a case without an evaluator named is the mean of its
     * evaluators' scores.
     *
     * @param text case-insensitive text searched in the id, input, output and reason (their kept prefixes)
     */
    record Query(
            Optional<CaseResults.Outcome> outcome,
            Optional<String> gate,
            Optional<String> evaluator,
            Optional<String> errorType,
            Optional<String> group,
            Optional<String> tag,
            Optional<String> text,
            Sort sort,
            boolean descending) {
        static final Query ALL = new Query(
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                Sort.ORDINAL,
                false);

        /** The same query with another outcome. */
        Query withOutcome(Optional<CaseResults.Outcome> o) {
            return new Query(o, gate, evaluator, errorType, group, tag, text, sort, descending);
        }
    }

    /** One case as a row of the list. */
    record Row(
            long ordinal,
            String caseId,
            CaseResults.Outcome outcome,
            Map<String, String> gates,
            Map<String, String> evaluators,
            Map<String, Double> scores,
            Optional<String> errorType,
            String input,
            String expected,
            String output,
            String reason,
            int attempts,
            int epochs,
            long agentMillis,
            long tokens,
            Optional<Double> costUsd,
            String group,
            List<String> tags) {}

    /**
     * One page of a query.
     *
     * @param total         cases matching the query
     * @param outcomeCounts per outcome (passed, failed, errored), the cases matching every filter but the outcome
     * @param gateCounts    per gate and outcome, the cases matching every filter but the gate and the outcome
     * @param errorCounts   per error type, the matching cases that have it (the error filter left out)
     */
    record Page(
            List<Row> rows,
            OptionalLong nextAfter,
            int total,
            Map<CaseResults.Outcome, Integer> outcomeCounts,
            Map<String, Map<CaseResults.Outcome, Integer>> gateCounts,
            Map<String, Integer> errorCounts) {}

    private static final CaseResults.Outcome[] OUTCOMES = CaseResults.Outcome.values();

    final UUID runId;
    final List<String> gates;
    final List<String> evaluators;
    private final int n;
    private final long[] ordinals;
    private final byte[] outcome;
    private final byte[] gateOutcomes;
    private final byte[] evalOutcomes;
    private final float[] evalScores;
    private final int[] errorType;
    private final List<String> errorTypes;
    private final int[] attempts;
    private final int[] epochs;
    private final long[] millis;
    private final long[] tokens;
    private final double[] cost;
    private final int[] group;
    private final List<String> groups;
    private final int[] tagStart;
    private final int[] tagIds;
    private final List<String> tags;
    private final Texts ids;
    private final Texts inputs;
    private final Texts expecteds;
    private final Texts outputs;
    private final Texts reasons;

    private CaseIndex(Builder b) {
        this.runId = b.runId;
        this.gates = List.copyOf(b.gates);
        this.evaluators = List.copyOf(b.evaluatorNames);
        this.n = b.n;
        this.ordinals = Arrays.copyOf(b.ordinals, n);
        this.outcome = Arrays.copyOf(b.outcome, n);
        this.gateOutcomes = Arrays.copyOf(b.gateOutcomes, n * gates.size());
        this.evalOutcomes = Arrays.copyOf(b.evalOutcomes, n * evaluators.size());
        this.evalScores = Arrays.copyOf(b.evalScores, n * evaluators.size());
        this.errorType = Arrays.copyOf(b.errorType, n);
        this.errorTypes = List.copyOf(b.errorTypes.names);
        this.attempts = Arrays.copyOf(b.attempts, n);
        this.epochs = Arrays.copyOf(b.epochs, n);
        this.millis = Arrays.copyOf(b.millis, n);
        this.tokens = Arrays.copyOf(b.tokens, n);
        this.cost = Arrays.copyOf(b.cost, n);
        this.group = Arrays.copyOf(b.group, n);
        this.groups = List.copyOf(b.groups.names);
        this.tagStart = Arrays.copyOf(b.tagStart, n + 1);
        this.tagIds = Arrays.copyOf(b.tagIds, b.tagCount);
        this.tags = List.copyOf(b.tags.names);
        this.ids = b.ids.build();
        this.inputs = b.inputs.build();
        this.expecteds = b.expecteds.build();
        this.outputs = b.outputs.build();
        this.reasons = b.reasons.build();
    }

    /** Executed cases indexed. */
    int size() {
        return n;
    }

    /** An estimate of the heap the index holds, for the cache's budget. */
    long bytes() {
        long b = 512;
        b += 8L * n * 5; // ordinals, millis, tokens, cost, and the arrays' slack
        b += 4L * n * 6; // error type, attempts, epochs, group, tag starts, positions while sorting
        b += n + gateOutcomes.length + evalOutcomes.length + 4L * evalScores.length + 4L * tagIds.length;
        for (Texts t : List.of(ids, inputs, expecteds, outputs, reasons)) {
            b += t.bytes.length + 4L * t.start.length;
        }
        return b;
    }

    /** The position of the case at {@code ordinal}, if it was executed. */
    OptionalInt position(long ordinal) {
        int i = Arrays.binarySearch(ordinals, ordinal);
        return i < 0 ? OptionalInt.empty() : OptionalInt.of(i);
    }

    /**
     * What the matrix needs of a run, without the texts: per executed case (ordinal order) its ordinal, outcome, mean
     * evaluator score (NaN without one) and id. About 20 bytes a case; shares the index's arrays, which are immutable.
     */
    static final class Column {
        private final long[] ordinals;
        private final byte[] outcome;
        private final float[] scores;
        private final Texts ids;

        private Column(long[] ordinals, byte[] outcome, float[] scores, Texts ids) {
            this.ordinals = ordinals;
            this.outcome = outcome;
            this.scores = scores;
            this.ids = ids;
        }

        int size() {
            return ordinals.length;
        }

        long ordinalAt(int i) {
            return ordinals[i];
        }

        CaseResults.Outcome outcomeAt(int i) {
            return OUTCOMES[outcome[i]];
        }

        double scoreAt(int i) {
            return scores[i];
        }

        String idAt(int i) {
            return ids.get(i);
        }

        long bytes() {
            return 256L + 13L * ordinals.length + ids.bytes.length + 4L * ids.start.length;
        }
    }

    /** The matrix's column of this run. */
    Column column() {
        float[] s = new float[n];
        for (int i = 0; i < n; i++) {
            s[i] = (float) score(i, -1);
        }
        return new Column(ordinals, outcome, s, ids);
    }

    /** The ordinal of the executed case whose id is {@code caseId}. */
    OptionalLong ordinalOf(String caseId) {
        byte[] id = caseId.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < n; i++) {
            if (ids.equals(i, id)) {
                return OptionalLong.of(ordinals[i]);
            }
        }
        return OptionalLong.empty();
    }

    /** Checks the query's names against the run, one clear line for a name it does not have. */
    void check(Query q) {
        q.gate().ifPresent(g -> {
            if (!gates.contains(g)) {
                throw new InvalidInputException(
                        "run " + runId + " has no gate " + Names.quote(g) + "; its gates: " + String.join(", ", gates));
            }
        });
        q.evaluator().ifPresent(e -> {
            if (!evaluators.contains(e)) {
                throw new InvalidInputException("run " + runId + " has no evaluator " + Names.quote(e)
                        + " in its results; its evaluators: " + String.join(", ", evaluators));
            }
        });
    }

    /**
     * The page of {@code q} after the case at ordinal {@code after} (-1: the first page), at most {@code limit} rows.
     * With the ordinal order, {@code after} need not be an executed case (the list continues at the next greater
     * ordinal, as the pages before the explorer did); with another order it must be one.
     */
    Page page(Query q, long after, int limit) {
        check(q);
        Selection s = select(q);
        int from = 0;
        if (after >= 0) {
            from = startAfter(q, s.matches, after);
        }
        List<Row> rows = new ArrayList<>();
        int end = Math.min(s.matches.length, from + limit);
        for (int i = from; i < end; i++) {
            rows.add(row(s.matches[i]));
        }
        OptionalLong next =
                end < s.matches.length ? OptionalLong.of(ordinals[s.matches[end - 1]]) : OptionalLong.empty();
        return new Page(rows, next, s.matches.length, s.outcomeCounts, s.gateCounts, s.errorCounts);
    }

    /** The ordinals of every case {@code q} lists, ascending (for downloads, which keep the ordinal order). */
    long[] ordinals(Query q) {
        check(q);
        int[] m = select(q).matches;
        long[] out = new long[m.length];
        for (int i = 0; i < m.length; i++) {
            out[i] = ordinals[m[i]];
        }
        Arrays.sort(out);
        return out;
    }

    /** The ordinals before and after {@code ordinal} in {@code q}'s list; empty when it is not in the list. */
    Optional<long[]> neighbours(Query q, long ordinal) {
        check(q);
        OptionalInt p = position(ordinal);
        if (p.isEmpty()) {
            return Optional.empty();
        }
        int[] m = select(q).matches;
        for (int i = 0; i < m.length; i++) {
            if (m[i] == p.getAsInt()) {
                long prev = i > 0 ? ordinals[m[i - 1]] : -1;
                long next = i + 1 < m.length ? ordinals[m[i + 1]] : -1;
                return Optional.of(new long[] {prev, next, i, m.length});
            }
        }
        return Optional.empty();
    }

    private int startAfter(Query q, int[] matches, long after) {
        if (q.sort() == Sort.ORDINAL) {
            // Ordinal order: the first match with a greater (or, descending, smaller) ordinal.
            int lo = 0;
            int hi = matches.length;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                long o = ordinals[matches[mid]];
                if (q.descending() ? o >= after : o <= after) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return lo;
        }
        int p = position(after)
                .orElseThrow(() -> new InvalidInputException("after " + after + " names no executed case of run "
                        + runId + "; use the next_after of the" + " page before"));
        Comparator<Integer> order = comparator(q);
        int lo = 0;
        int hi = matches.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (order.compare(matches[mid], p) <= 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    private record Selection(
            int[] matches,
            Map<CaseResults.Outcome, Integer> outcomeCounts,
            Map<String, Map<CaseResults.Outcome, Integer>> gateCounts,
            Map<String, Integer> errorCounts) {}

    private Selection select(Query q) {
        int gate = q.gate().map(gates::indexOf).orElse(-1);
        int eval = q.evaluator().map(evaluators::indexOf).orElse(-1);
        // -1: no such filter; -2: a value no case has, so nothing matches.
        int err = q.errorType().map(x -> known(errorTypes.indexOf(x))).orElse(-1);
        int grp = q.group().map(x -> known(groups.indexOf(x))).orElse(-1);
        int tag = q.tag().map(x -> known(tags.indexOf(x))).orElse(-1);
        byte[] needle =
                q.text().map(t -> lower(t.getBytes(StandardCharsets.UTF_8))).orElse(null);
        int wanted = q.outcome().map(Enum::ordinal).orElse(-1);
        int[] matches = new int[n];
        int count = 0;
        int[] outcomeCounts = new int[3];
        int[][] gateCounts = new int[gates.size()][3];
        int[] errorCounts = new int[errorTypes.size()];
        for (int i = 0; i < n; i++) {
            if (!base(i, eval, grp, tag, needle)) {
                continue;
            }
            boolean errorOk = err == -1 || errorType[i] == err;
            if (errorOk) {
                for (int g = 0; g < gates.size(); g++) {
                    int o = gateOutcomes[i * gates.size() + g];
                    if (o > 0) {
                        gateCounts[g][o - 1]++;
                    }
                }
            }
            int o = outcomeOf(i, gate, eval);
            if (o < 0) {
                continue;
            }
            if (errorOk) {
                outcomeCounts[o]++;
            }
            if (wanted >= 0 && o != wanted) {
                continue;
            }
            if (errorType[i] >= 0) {
                errorCounts[errorType[i]]++;
            }
            if (errorOk) {
                matches[count++] = i;
            }
        }
        matches = Arrays.copyOf(matches, count);
        if (q.sort() != Sort.ORDINAL || q.descending()) {
            Integer[] boxed = new Integer[count];
            for (int i = 0; i < count; i++) {
                boxed[i] = matches[i];
            }
            Arrays.sort(boxed, comparator(q));
            for (int i = 0; i < count; i++) {
                matches[i] = boxed[i];
            }
        }
        Map<CaseResults.Outcome, Integer> oc = new LinkedHashMap<>();
        for (CaseResults.Outcome x : OUTCOMES) {
            oc.put(x, outcomeCounts[x.ordinal()]);
        }
        Map<String, Map<CaseResults.Outcome, Integer>> gc = new LinkedHashMap<>();
        for (int g = 0; g < gates.size(); g++) {
            Map<CaseResults.Outcome, Integer> m = new LinkedHashMap<>();
            for (CaseResults.Outcome x : OUTCOMES) {
                m.put(x, gateCounts[g][x.ordinal()]);
            }
            gc.put(gates.get(g), m);
        }
        Map<String, Integer> ec = new LinkedHashMap<>();
        for (int e = 0; e < errorTypes.size(); e++) {
            if (errorCounts[e] > 0) {
                ec.put(errorTypes.get(e), errorCounts[e]);
            }
        }
        return new Selection(matches, oc, gc, ec);
    }

    private static int known(int index) {
        return index < 0 ? -2 : index;
    }

    /** The filters that neither the outcome, the gate nor the error type counts leave out. */
    private boolean base(int i, int eval, int grp, int tag, byte[] needle) {
        if (eval >= 0 && evalOutcomes[i * evaluators.size() + eval] == 0) {
            return false;
        }
        if (grp != -1 && group[i] != grp) {
            return false;
        }
        if (tag != -1) {
            boolean has = false;
            for (int t = tagStart[i]; t < tagStart[i + 1]; t++) {
                has |= tagIds[t] == tag;
            }
            if (!has) {
                return false;
            }
        }
        return needle == null
                || ids.contains(i, needle)
                || inputs.contains(i, needle)
                || outputs.contains(i, needle)
                || reasons.contains(i, needle);
    }

    /** The outcome the query sees (an {@link CaseResults.Outcome} ordinal), or -1 when its gate does not select it. */
    private int outcomeOf(int i, int gate, int eval) {
        if (eval >= 0) {
            return evalOutcomes[i * evaluators.size() + eval] - 1;
        }
        if (gate >= 0) {
            return gateOutcomes[i * gates.size() + gate] - 1;
        }
        return outcome[i];
    }

    private double score(int i, int eval) {
        int e = evaluators.size();
        if (eval >= 0) {
            return evalOutcomes[i * e + eval] == 0 ? Double.NaN : evalScores[i * e + eval];
        }
        double sum = 0;
        int k = 0;
        for (int j = 0; j < e; j++) {
            if (evalOutcomes[i * e + j] != 0) {
                sum += evalScores[i * e + j];
                k++;
            }
        }
        return k == 0 ? Double.NaN : sum / k;
    }

    /** The query's order over positions: its key (unknown values last either way), then the ordinal. */
    private Comparator<Integer> comparator(Query q) {
        int eval = q.evaluator().map(evaluators::indexOf).orElse(-1);
        int sign = q.descending() ? -1 : 1;
        return (a, b) -> {
            double x = key(q.sort(), a, eval);
            double y = key(q.sort(), b, eval);
            boolean xu = Double.isNaN(x);
            boolean yu = Double.isNaN(y);
            if (xu != yu) {
                return xu ? 1 : -1;
            }
            int c = xu ? 0 : sign * Double.compare(x, y);
            return c != 0 ? c : sign * Long.compare(ordinals[a], ordinals[b]);
        };
    }

    private double key(Sort sort, int i, int eval) {
        return switch (sort) {
            case ORDINAL -> ordinals[i];
            case SCORE -> score(i, eval);
            case TIME -> millis[i];
            case TOKENS -> tokens[i] < 0 ? Double.NaN : tokens[i];
            case COST -> cost[i];
        };
    }

    private Row row(int i) {
        Map<String, String> g = new LinkedHashMap<>();
        for (int j = 0; j < gates.size(); j++) {
            int o = gateOutcomes[i * gates.size() + j];
            if (o > 0) {
                g.put(gates.get(j), OUTCOMES[o - 1].spelling());
            }
        }
        Map<String, String> e = new LinkedHashMap<>();
        Map<String, Double> sc = new LinkedHashMap<>();
        for (int j = 0; j < evaluators.size(); j++) {
            int o = evalOutcomes[i * evaluators.size() + j];
            if (o > 0) {
                e.put(evaluators.get(j), OUTCOMES[o - 1].spelling());
                sc.put(evaluators.get(j), (double) evalScores[i * evaluators.size() + j]);
            }
        }
        List<String> t = new ArrayList<>();
        for (int k = tagStart[i]; k < tagStart[i + 1]; k++) {
            t.add(tags.get(tagIds[k]));
        }
        return new Row(
                ordinals[i],
                ids.get(i),
                OUTCOMES[outcome[i]],
                g,
                e,
                sc,
                errorType[i] < 0 ? Optional.empty() : Optional.of(errorTypes.get(errorType[i])),
                inputs.get(i),
                expecteds.get(i),
                outputs.get(i),
                reasons.get(i),
                attempts[i],
                epochs[i],
                millis[i],
                tokens[i],
                Double.isNaN(cost[i]) ? Optional.empty() : Optional.of(cost[i]),
                group[i] < 0 ? "" : groups.get(group[i]),
                t);
    }

    private static byte[] lower(byte[] b) {
        byte[] out = b.clone();
        for (int i = 0; i < out.length; i++) {
            if (out[i] >= 'A' && out[i] <= 'Z') {
                out[i] = (byte) (out[i] + 32);
            }
        }
        return out;
    }

    /** A text column: the kept prefixes, back to back, and where each starts. */
    private static final class Texts {
        final byte[] bytes;
        final int[] start;

        Texts(byte[] bytes, int[] start) {
            this.bytes = bytes;
            this.start = start;
        }

        String get(int i) {
            return new String(bytes, start[i], start[i + 1] - start[i], StandardCharsets.UTF_8);
        }

        boolean equals(int i, byte[] value) {
            return Arrays.equals(bytes, start[i], start[i + 1], value, 0, value.length);
        }

        /** Whether entry {@code i} holds {@code needle} (lower case), ASCII letters compared without case. */
        boolean contains(int i, byte[] needle) {
            int from = start[i];
            int last = start[i + 1] - needle.length;
            outer:
            for (int p = from; p <= last; p++) {
                for (int k = 0; k < needle.length; k++) {
                    byte c = bytes[p + k];
                    if (c >= 'A' && c <= 'Z') {
                        c = (byte) (c + 32);
                    }
                    if (c != needle[k]) {
                        continue outer;
                    }
                }
                return true;
            }
            return false;
        }
    }

    private static final class TextsBuilder {
        private byte[] bytes = new byte[1024];
        private int length;
        private int[] start = new int[64];
        private int count;

        void add(String s) {
            byte[] b = cut(s);
            if (length + b.length > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, length + b.length));
            }
            System.arraycopy(b, 0, bytes, length, b.length);
            if (count + 2 > start.length) {
                start = Arrays.copyOf(start, start.length * 2);
            }
            start[count++] = length;
            length += b.length;
        }

        Texts build() {
            int[] s = Arrays.copyOf(start, count + 1);
            s[count] = length;
            return new Texts(Arrays.copyOf(bytes, length), s);
        }

        /** The first {@value #TEXT_BYTES} bytes of {@code s}, cut before a character that would not fit whole. */
        private static byte[] cut(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            if (b.length <= TEXT_BYTES) {
                return b;
            }
            int end = TEXT_BYTES;
            while (end > 0 && (b[end] & 0xC0) == 0x80) {
                end--;
            }
            return Arrays.copyOf(b, end);
        }
    }

    /** Names given small numbers in the order first seen. */
    private static final class Interned {
        final List<String> names = new ArrayList<>();
        final Map<String, Integer> ids = new HashMap<>();

        int id(String name) {
            return ids.computeIfAbsent(name, k -> {
                names.add(k);
                return names.size() - 1;
            });
        }
    }

    /** The dataset fields of a case the index keeps. */
    record DatasetFields(String input, String expected, Optional<String> group, List<String> tags) {}

    /** Builds an index from executed cases in ordinal order and their dataset fields. */
    static final class Builder {
        private final UUID runId;
        private final List<String> gates = new ArrayList<>();
        private final List<String> evaluatorNames = new ArrayList<>();
        private int n;
        private int capacity = 1024;
        private long[] ordinals = new long[capacity];
        private byte[] outcome = new byte[capacity];
        private byte[] gateOutcomes = new byte[0];
        private byte[] evalOutcomes = new byte[0];
        private float[] evalScores = new float[0];
        private int[] errorType = new int[capacity];
        private final Interned errorTypes = new Interned();
        private int[] attempts = new int[capacity];
        private int[] epochs = new int[capacity];
        private long[] millis = new long[capacity];
        private long[] tokens = new long[capacity];
        private double[] cost = new double[capacity];
        private int[] group = new int[capacity];
        private final Interned groups = new Interned();
        private int[] tagStart = new int[capacity + 1];
        private int[] tagIds = new int[capacity];
        private int tagCount;
        private final Interned tags = new Interned();
        private final TextsBuilder ids = new TextsBuilder();
        private final TextsBuilder inputs = new TextsBuilder();
        private final TextsBuilder expecteds = new TextsBuilder();
        private final TextsBuilder outputs = new TextsBuilder();
        private final TextsBuilder reasons = new TextsBuilder();

        Builder(UUID runId) {
            this.runId = runId;
        }

        /** Adds the next executed case (ordinals must increase). */
        void add(CaseResults.ScannedCase sc, DatasetFields fields) {
            CaseResults.ExecutedCase c = sc.result();
            if (n > 0 && c.ordinal() <= ordinals[n - 1]) {
                throw new IllegalStateException(
                        "executed cases out of ordinal order: " + c.ordinal() + " after " + ordinals[n - 1]);
            }
            for (String g : c.gates().keySet()) {
                if (!gates.contains(g)) {
                    gates.add(g);
                    gateOutcomes = widen(gateOutcomes, gates.size() - 1, gates.size());
                }
            }
            for (CaseResults.EvaluatorOutcome e : c.evaluators()) {
                if (!evaluatorNames.contains(e.name())) {
                    evaluatorNames.add(e.name());
                    evalOutcomes = widen(evalOutcomes, evaluatorNames.size() - 1, evaluatorNames.size());
                    evalScores = widen(evalScores, evaluatorNames.size() - 1, evaluatorNames.size());
                }
            }
            grow();
            int i = n;
            ordinals[i] = c.ordinal();
            outcome[i] = (byte) c.outcome().ordinal();
            int gs = gates.size();
            for (int g = 0; g < gs; g++) {
                String o = c.gates().get(gates.get(g));
                gateOutcomes[i * gs + g] =
                        o == null ? 0 : (byte) (CaseResults.Outcome.parse(o).ordinal() + 1);
            }
            int es = evaluatorNames.size();
            String error = c.errorType().orElse(null);
            for (CaseResults.EvaluatorOutcome e : c.evaluators()) {
                int j = evaluatorNames.indexOf(e.name());
                CaseResults.Outcome o = e.errorType().isPresent()
                        ? CaseResults.Outcome.ERRORED
                        : e.passed() ? CaseResults.Outcome.PASSED : CaseResults.Outcome.FAILED;
                evalOutcomes[i * es + j] = (byte) (o.ordinal() + 1);
                evalScores[i * es + j] = (float) e.score();
                if (error == null && e.errorType().isPresent()) {
                    error = e.errorType().get();
                }
            }
            errorType[i] = error == null ? -1 : errorTypes.id(error);
            attempts[i] = c.attempts();
            epochs[i] = c.epochs();
            millis[i] = c.agentMillis();
            tokens[i] = c.usage().map(u -> u.all().tokens()).orElse(-1L);
            cost[i] = c.usage()
                    .flatMap(u -> u.all().costUsd())
                    .map(java.math.BigDecimal::doubleValue)
                    .orElse(Double.NaN);
            group[i] = fields.group().map(groups::id).orElse(-1);
            tagStart[i] = tagCount;
            for (String t : fields.tags()) {
                if (tagCount == tagIds.length) {
                    tagIds = Arrays.copyOf(tagIds, tagIds.length * 2);
                }
                tagIds[tagCount++] = tags.id(t);
            }
            tagStart[i + 1] = tagCount;
            ids.add(c.caseId());
            inputs.add(fields.input());
            expecteds.add(fields.expected());
            outputs.add(sc.output().orElse(""));
            reasons.add(c.errorType()
                    .map(t -> t + ": " + c.errorMessage().orElse(""))
                    .orElseGet(() -> RunPages.why(c)));
            n++;
        }

        void gates(List<String> names) {
            for (String g : names) {
                if (!gates.contains(g)) {
                    gates.add(g);
                    gateOutcomes = widen(gateOutcomes, gates.size() - 1, gates.size());
                }
            }
        }

        CaseIndex build() {
            return new CaseIndex(this);
        }

        private void grow() {
            if (n < capacity) {
                return;
            }
            capacity *= 2;
            ordinals = Arrays.copyOf(ordinals, capacity);
            outcome = Arrays.copyOf(outcome, capacity);
            gateOutcomes = Arrays.copyOf(gateOutcomes, capacity * gates.size());
            evalOutcomes = Arrays.copyOf(evalOutcomes, capacity * evaluatorNames.size());
            evalScores = Arrays.copyOf(evalScores, capacity * evaluatorNames.size());
            errorType = Arrays.copyOf(errorType, capacity);
            attempts = Arrays.copyOf(attempts, capacity);
            epochs = Arrays.copyOf(epochs, capacity);
            millis = Arrays.copyOf(millis, capacity);
            tokens = Arrays.copyOf(tokens, capacity);
            cost = Arrays.copyOf(cost, capacity);
            group = Arrays.copyOf(group, capacity);
            tagStart = Arrays.copyOf(tagStart, capacity + 1);
        }

        /** A row-major matrix of {@code n} rows given one more column at {@code column} (the last). */
        private byte[] widen(byte[] m, int oldWidth, int width) {
            byte[] out = new byte[capacity * width];
            for (int i = 0; i < n; i++) {
                System.arraycopy(m, i * oldWidth, out, i * width, oldWidth);
            }
            return out;
        }

        private float[] widen(float[] m, int oldWidth, int width) {
            float[] out = new float[capacity * width];
            for (int i = 0; i < n; i++) {
                System.arraycopy(m, i * oldWidth, out, i * width, oldWidth);
            }
            return out;
        }
    }
}
