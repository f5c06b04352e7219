package dev.vigilo.exec.view;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.UsageSummary;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.record.UsageTallies;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreBinding;
import dev.vigilo.storage.StoreSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.jdbi.v3.core.Jdbi;

/**
 * Pages of a run's executed cases, filtered by outcome and gate, for viewers (docs/execution.md, "Case pages"); and
 * one case with everything its receipt says. The cases of done chunks are read from their receipts (verified like
 * {@link RunResults} does); nothing is loaded beyond one page of chunk rows per execution database and one receipt at
 * a time.
 *
 * <p>A case's <em>outcome</em>: {@code errored} when its agent ended in an error or a gate that selects it errored;
 * otherwise {@code failed} when such a gate failed; otherwise {@code passed} (a case no gate selects passes unless its
 * agent errored). With a gate in the filter, the outcome is that gate's, and cases the gate does not select are left
 * out. Chunks whose tallies show no case of the wanted outcome are skipped without reading their receipt, so sparse
 * failures of a large run are found in a few reads. A page reads at most {@value #RECEIPT_BUDGET} receipts: when that
 * budget ends the page is shorter and {@link Page#nextAfter()} continues after the last case looked at.
 *
 * <p>Thread-safe. Opens the run's object store on first use and keeps it until {@link #close()}.
 */
public final class CaseResults implements AutoCloseable {
    /** The largest page. */
    public static final int MAX_LIMIT = 500;
    /** Receipts read at most per page. */
    static final int RECEIPT_BUDGET = 64;
    /** Chunk rows per query and execution database. */
    static final int ROWS = 64;

    /** What became of one executed case. */
    public enum Outcome {
        PASSED,
        FAILED,
        ERRORED;

        /** Lower-case, as in URLs and JSON. */
        public String spelling() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** @throws InvalidInputException for anything but passed, failed or errored */
        public static Outcome parse(String text) {
            for (Outcome o : values()) {
                if (o.spelling().equals(text)) {
                    return o;
                }
            }
            throw new InvalidInputException("unknown case outcome \"" + text + "\"; use passed, failed or errored");
        }
    }

    /**
     * Which cases a page lists.
     *
     * @param outcome only cases with this outcome (all when empty)
     * @param gate    outcomes of this gate only, and only cases it selects (every gate when empty)
     */
    public record Filter(Optional<Outcome> outcome, Optional<String> gate) {
        public static final Filter ALL = new Filter(Optional.empty(), Optional.empty());

        public Filter {
            Objects.requireNonNull(outcome, "outcome");
            Objects.requireNonNull(gate, "gate");
        }
    }

    /**
     * One evaluator's result on a case; {@code errorType} and {@code errorMessage} are set together; {@code reason} is
     * why it passed or failed (receipts of version 4; empty on an error and for evaluators that give none).
     */
    public record EvaluatorOutcome(
            String name,
            boolean passed,
            double score,
            Optional<String> errorType,
            Optional<String> errorMessage,
            long millis,
            Optional<String> reason) {}

    /**
     * One executed case, as its receipt records it.
     *
     * @param outcome           see the class comment
     * @param agentErrored      the agent ended in an error (no output)
     * @param gates             outcome per selecting gate, gate order ({@code passed|failed|errored})
     * @param outputLength      UTF-8 bytes of the output
     * @param outputStoredApart whether the output is an object of its own (longer than the receipt inlines)
     * @param epochPasses       in a run of several epochs, per selecting gate (gate order) how many of the case's
     *                          epochs passed it, the case's result being their reduction; empty with one epoch and for
     *                          an epoch itself
     * @param epochs            epochs per case of the run (1 with one epoch, and for an epoch itself)
     * @param usage             the tokens and cost of its model calls (of a case of several epochs: of all of them);
     *                          empty for receipts written before usage was recorded
     */
    public record ExecutedCase(
            long ordinal,
            String caseId,
            int shard,
            long chunk,
            Outcome outcome,
            boolean agentErrored,
            int attempts,
            long agentMillis,
            Optional<String> errorType,
            Optional<String> errorMessage,
            List<EvaluatorOutcome> evaluators,
            Map<String, String> gates,
            long outputLength,
            boolean outputStoredApart,
            Map<String, Integer> epochPasses,
            int epochs,
            Optional<UsageSummary> usage) {
        public ExecutedCase {
            evaluators = List.copyOf(evaluators);
            gates = Collections.unmodifiableMap(new LinkedHashMap<>(gates));
            epochPasses = Collections.unmodifiableMap(new LinkedHashMap<>(epochPasses));
        }
    }

    /**
     * One epoch of a case of a run of several epochs, as its receipt records it.
     *
     * @param epoch        the 1-based epoch
     * @param result       the epoch's own result (its outcome, attempts, evaluators and gates)
     * @param output       its output (read and verified when stored apart); empty when its agent errored
     * @param outputSha256 SHA-256 of the output's UTF-8 bytes
     * @param transcripts  the transcript of each of its attempts, in attempt order
     */
    public record EpochDetail(
            int epoch,
            ExecutedCase result,
            Optional<String> output,
            Optional<String> outputSha256,
            List<RunTranscripts.Attempt> transcripts) {
        public EpochDetail {
            transcripts = List.copyOf(transcripts);
        }
    }

    /**
     * One page.
     *
     * @param cases        matching cases in ordinal order, at most the limit
     * @param nextAfter    the {@code after} of the next page; empty when no case is left to look at
     * @param receiptsRead receipts this page read
     */
    public record Page(List<ExecutedCase> cases, OptionalLong nextAfter, int receiptsRead) {
        public Page {
            cases = List.copyOf(cases);
        }
    }

    /**
     * One case with its output and its receipt's provenance.
     *
     * @param output          the output (read and verified when stored apart); empty when the agent errored
     * @param outputSha256    SHA-256 of the output's UTF-8 bytes
     * @param receiptKey      the chunk's receipt object
     * @param leaseGeneration the lease generation the receipt was written under
     * @param worker          the worker that wrote it
     * @param chunkStartedAt  when the chunk's execution began
     * @param chunkFinishedAt when its last case ended
     * @param caseSha256      the case's SHA-256 (as the dataset and the chunk file record it)
     * @param transcripts     the transcript of each attempt of the agent, in attempt order (read them with
     *                        {@link RunTranscripts#write}); empty for a receipt written before transcripts were
     *                        recorded, and for a case of several epochs (each epoch lists its own)
     * @param epochs          in a run of several epochs, each epoch in epoch order (the case's result and output are
     *                        then their reduction, without an output); empty with one epoch
     * @param keptFiles       the files its sandboxed executions kept (receipt version 5), the case's own or each
     *                        epoch's in epoch order; empty without {@code keep_files}
     */
    public record CaseDetail(
            ExecutedCase result,
            Optional<String> output,
            Optional<String> outputSha256,
            String receiptKey,
            long leaseGeneration,
            UUID worker,
            Instant chunkStartedAt,
            Instant chunkFinishedAt,
            String caseSha256,
            List<RunTranscripts.Attempt> transcripts,
            List<EpochDetail> epochs,
            List<KeptFile> keptFiles) {
        public CaseDetail {
            transcripts = List.copyOf(transcripts);
            epochs = List.copyOf(epochs);
            keptFiles = List.copyOf(keptFiles);
        }
    }

    /**
     * A file a sandboxed execution of a case kept, as its receipt references it.
     *
     * @param epoch the epoch that kept it, from 1; 0 in a run of one epoch
     * @param path  its path in the sandbox's work directory
     * @param ref   the stored object
     */
    public record KeptFile(int epoch, String path, ObjectRef ref) {
        public KeptFile {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(ref, "ref");
        }
    }

    /**
     * The bytes of kept file {@code index} of a case ({@link CaseDetail#keptFiles()} order), read through the run's
     * store and verified against the receipt's reference.
     *
     * @throws NotFoundException when the case has not been executed or kept no such file
     * @throws DamagedException  when the stored file is missing or altered
     */
    public byte[] keptFile(UUID runId, long ordinal, int index) {
        CaseDetail d = find(runId, ordinal)
                .orElseThrow(() ->
                        new NotFoundException("case " + ordinal + " of run " + runId + " has not been" + " executed"));
        if (index < 0 || index >= d.keptFiles().size()) {
            throw new NotFoundException("case " + ordinal + " of run " + runId + " kept "
                    + d.keptFiles().size() + " files; there is no file " + index);
        }
        KeptFile k = d.keptFiles().get(index);
        return ChunkRows.read(
                view(runId).store(),
                k.ref(),
                "kept file " + k.path() + " (" + k.ref().key().value() + ") of case " + ordinal);
    }

    private final Placements placements;
    private final StorageConfig storage;
    private final Jdbi control;
    private final Map<String, ObjectStore> stores = new ConcurrentHashMap<>();

    public CaseResults(Placements placements, StorageConfig storage) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.storage = Objects.requireNonNull(storage, "storage");
        this.control = placements.control();
    }

    /** The run as a viewer needs it: routes, gate names and its store. */
    private record RunView(UUID runId, List<RunRecords.Route> routes, List<String> gates, ObjectStore store) {}

    /**
     * Cases of the run with ordinal greater than {@code after} that match {@code filter}, in ordinal order.
     *
     * @param after the previous page's {@link Page#nextAfter()}, or -1 for the first page
     * @param limit 1..{@value #MAX_LIMIT}
     * @throws NotFoundException     no such run
     * @throws InvalidInputException a gate the run does not have, or a limit out of range
     * @throws dev.vigilo.common.errors.DamagedException a receipt is missing or altered
     * @throws UnavailableException  an execution database or the store cannot be reached
     */
    public Page page(UUID runId, Filter filter, long after, int limit) {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(filter, "filter");
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new InvalidInputException("page size " + limit + " is out of range; use 1.." + MAX_LIMIT);
        }
        RunView run = view(runId);
        int gate = gateIndex(run, filter.gate());
        Iterator<ChunkRows.Row> rows = ChunkRows.cursor(
                placements,
                runId,
                run.routes(),
                ChunkRows.DONE + prefilter(filter.outcome(), gate),
                Math.max(-1, after),
                ROWS);
        List<ExecutedCase> out = new ArrayList<>();
        int reads = 0;
        long lastSeen = after;
        while (true) {
            if (!rows.hasNext()) {
                return new Page(out, OptionalLong.empty(), reads);
            }
            if (reads == RECEIPT_BUDGET) {
                return new Page(out, OptionalLong.of(lastSeen), reads);
            }
            ChunkRows.Row row = rows.next();
            Receipt r = ChunkRows.receipt(runId, run.store(), row);
            reads++;
            for (Receipt.CaseResult c : r.cases()) {
                if (c.ordinal() <= after) {
                    continue;
                }
                ExecutedCase e = executed(
                        row,
                        c,
                        gate < 0 ? Optional.empty() : Optional.of(run.gates().get(gate)));
                if (e == null || filter.outcome().map(o -> o != e.outcome()).orElse(false)) {
                    lastSeen = c.ordinal();
                    continue;
                }
                if (out.size() == limit) {
                    return new Page(out, OptionalLong.of(lastSeen), reads);
                }
                out.add(e);
                lastSeen = c.ordinal();
            }
        }
    }

    /**
     * The executed case at {@code ordinal}; empty when the run has no done chunk holding it (the case has not run,
     * its chunk failed, or the ordinal is beyond the plan).
     *
     * @throws NotFoundException no such run
     */
    public Optional<CaseDetail> find(UUID runId, long ordinal) {
        Objects.requireNonNull(runId, "runId");
        if (ordinal < 0) {
            return Optional.empty();
        }
        RunView run = view(runId);
        for (var g : RunRecords.byPlacement(run.routes()).entrySet()) {
            for (ChunkRows.Row row : ChunkRows.doneHolding(placements, runId, g.getKey(), g.getValue(), ordinal)) {
                Receipt r = ChunkRows.receipt(runId, run.store(), row);
                for (Receipt.CaseResult c : r.cases()) {
                    if (c.ordinal() == ordinal) {
                        ExecutedCase e = executed(row, c, Optional.empty());
                        List<EpochDetail> epochs = new ArrayList<>();
                        List<RunTranscripts.Epoch> epochTranscripts = RunTranscripts.epochs(c);
                        for (int i = 0; i < c.epochs().size(); i++) {
                            Receipt.CaseResult x = c.epochs().get(i);
                            epochs.add(new EpochDetail(
                                    i + 1,
                                    executed(row, x, Optional.empty()),
                                    output(run.store(), x),
                                    x.outputSha256().map(Sha256::toHex),
                                    epochTranscripts.get(i).attempts()));
                        }
                        List<KeptFile> kept = new ArrayList<>();
                        c.keptFiles().forEach(k -> kept.add(new KeptFile(0, k.path(), k.ref())));
                        for (int i = 0; i < c.epochs().size(); i++) {
                            int epoch = i + 1;
                            c.epochs()
                                    .get(i)
                                    .keptFiles()
                                    .forEach(k -> kept.add(new KeptFile(epoch, k.path(), k.ref())));
                        }
                        return Optional.of(new CaseDetail(
                                e,
                                output(run.store(), c),
                                c.outputSha256().map(Sha256::toHex),
                                row.receipt().orElseThrow().key().value(),
                                r.leaseGeneration(),
                                r.worker(),
                                r.startedAt(),
                                r.finishedAt(),
                                c.caseSha256().toHex(),
                                c.transcripts().stream()
                                        .map(RunTranscripts.Attempt::of)
                                        .toList(),
                                epochs,
                                kept));
                    }
                }
            }
        }
        return Optional.empty();
    }

    /**
     * The executed cases at {@code ordinals}, as a page shows them (no outputs or transcripts): each done chunk's
     * receipt is read once however many of the ordinals it holds. An ordinal no done chunk holds is absent from the
     * map (its case has not run, its chunk failed, or it is beyond the plan).
     *
     * @param ordinals at most {@value #MAX_LIMIT} ordinals of the run's dataset
     * @throws NotFoundException     no such run
     * @throws InvalidInputException more than {@value #MAX_LIMIT} ordinals
     * @throws dev.vigilo.common.errors.DamagedException a receipt is missing or altered
     */
    public Map<Long, ExecutedCase> findAll(UUID runId, Collection<Long> ordinals) {
        Objects.requireNonNull(runId, "runId");
        if (ordinals.size() > MAX_LIMIT) {
            throw new InvalidInputException(ordinals.size() + " cases asked for at once; ask for at most " + MAX_LIMIT);
        }
        RunView run = view(runId);
        Map<Long, ExecutedCase> out = new HashMap<>();
        Map<String, Receipt> read = new HashMap<>();
        Set<Long> wanted = new TreeSet<>(ordinals);
        for (long ordinal : wanted) {
            if (ordinal < 0 || out.containsKey(ordinal)) {
                continue;
            }
            for (var g : RunRecords.byPlacement(run.routes()).entrySet()) {
                for (ChunkRows.Row row : ChunkRows.doneHolding(placements, runId, g.getKey(), g.getValue(), ordinal)) {
                    Receipt r = read.computeIfAbsent(
                            row.receipt().orElseThrow().key().value(), k -> ChunkRows.receipt(runId, run.store(), row));
                    // One receipt holds a chunk of consecutive cases: keep the asked-for ones it holds.
                    for (Receipt.CaseResult c : r.cases()) {
                        if (wanted.contains(c.ordinal())) {
                            out.putIfAbsent(c.ordinal(), executed(row, c, Optional.empty()));
                        }
                    }
                }
            }
        }
        return out;
    }

    /**
     * One executed case as {@link #scan} gives it: what a page shows, its output and the gates' names.
     *
     * @param result the case (outcome over every gate)
     * @param output its output (read and verified when stored apart); empty when its agent errored
     */
    public record ScannedCase(ExecutedCase result, Optional<String> output) {}

    /**
     * Every executed case of the run (the cases of its done chunks), in ordinal order, each with its output: one pass
     * over the done chunks' receipts (verified as {@link RunResults} reads them), one receipt and one output at a
     * time. For indexes built once per run (the dashboard's results explorer); a page reads through {@link #page}.
     *
     * @return the run's gate names, in gate order
     * @throws NotFoundException     no such run
     * @throws DamagedException      a receipt or output is missing or altered
     * @throws UnavailableException  an execution database or the store cannot be reached
     */
    public List<String> scan(UUID runId, java.util.function.Consumer<ScannedCase> each) {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(each, "each");
        RunView run = view(runId);
        Iterator<ChunkRows.Row> rows = ChunkRows.cursor(placements, runId, run.routes(), true);
        while (rows.hasNext()) {
            ChunkRows.Row row = rows.next();
            Receipt r = ChunkRows.receipt(runId, run.store(), row);
            for (Receipt.CaseResult c : r.cases()) {
                each.accept(new ScannedCase(executed(row, c, Optional.empty()), output(run.store(), c)));
            }
        }
        return run.gates();
    }

    /** The output of one execution, read and verified when stored apart; empty when its agent errored. */
    private static Optional<String> output(ObjectStore store, Receipt.CaseResult c) {
        return c.output().isPresent() ? c.output() : c.outputRef().map(x -> RunResults.output(store, c));
    }

    /**
     * SQL that keeps only chunks whose tallies can hold a case of the wanted outcome (a necessary condition: the
     * receipt decides). Built from constants and a gate index, never from user text.
     */
    private static String prefilter(Optional<Outcome> outcome, int gate) {
        if (outcome.isEmpty()) {
            return "";
        }
        if (gate >= 0) {
            String column = switch (outcome.get()) {
                case PASSED -> "gate_passed";
                case FAILED -> "gate_failed";
                case ERRORED -> "gate_errored";
            };
            return " AND " + column + "[" + (gate + 1) + "] > 0";
        }
        return switch (outcome.get()) {
            case PASSED -> " AND case_count > cases_errored";
            case FAILED -> " AND EXISTS (SELECT 1 FROM unnest(gate_failed) AS x WHERE x > 0)";
            case ERRORED -> " AND (cases_errored > 0 OR EXISTS (SELECT 1 FROM unnest(gate_errored) AS x WHERE x > 0))";
        };
    }

    private RunView view(UUID runId) {
        RunRecords.Run run = control.withHandle(h -> RunRecords.run(h, runId));
        List<RunRecords.Route> routes = control.withHandle(h -> RunRecords.routes(h, runId, ""));
        List<String> gates = control.withHandle(
                h -> h.createQuery("SELECT gate_counts FROM run_plan_shards WHERE run_id = :r ORDER BY shard LIMIT 1")
                        .bind("r", runId)
                        .mapTo(String.class)
                        .findOne()
                        .map(CaseResults::gateNames)
                        .orElse(List.of()));
        return new RunView(runId, routes, gates, store(runId, run.storageBinding()));
    }

    private static List<String> gateNames(String gateCounts) {
        try {
            List<String> out = new ArrayList<>();
            new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(gateCounts)
                    .forEach(p -> out.add(p.path(0).asText()));
            return out;
        } catch (java.io.IOException e) {
            throw new dev.vigilo.common.errors.DamagedException("the published gate counts of a shard cannot be"
                    + " read (" + e.getMessage() + "); the control record run_plan_shards was altered");
        }
    }

    private static int gateIndex(RunView run, Optional<String> gate) {
        if (gate.isEmpty()) {
            return -1;
        }
        int i = run.gates().indexOf(gate.get());
        if (i < 0) {
            throw new InvalidInputException("run " + run.runId() + " has no gate named \"" + gate.get()
                    + "\"; its gates: " + String.join(", ", run.gates()));
        }
        return i;
    }

    private ObjectStore store(UUID runId, String binding) {
        return stores.computeIfAbsent(binding, b -> {
            StoreSpec spec = storage.resolve(new StoreBinding(b))
                    .orElseThrow(() -> new InvalidInputException("run " + runId + ": its receipts are stored in " + b
                            + ", which the storage configuration (" + storage.source() + ") does not resolve; use a"
                            + " configuration with that store"));
            return ObjectStores.open(spec);
        });
    }

    /**
     * A case's outcome as a filter sees it: in {@code gate} (empty when the gate does not select the case), or over
     * every gate (errored when the agent or any gate errored, else failed when any gate failed, else passed).
     */
    static Optional<Outcome> outcome(Receipt.CaseResult c, Optional<String> gate) {
        if (gate.isPresent()) {
            return Optional.ofNullable(c.gates().get(gate.get())).map(CaseResults::of);
        }
        if (c.errored() || c.gates().containsValue(Receipt.GateOutcome.ERRORED)) {
            return Optional.of(Outcome.ERRORED);
        }
        if (c.gates().containsValue(Receipt.GateOutcome.FAILED)) {
            return Optional.of(Outcome.FAILED);
        }
        return Optional.of(Outcome.PASSED);
    }

    /** Whether {@code filter} lists the case. */
    static boolean accepts(Filter filter, Receipt.CaseResult c) {
        Optional<Outcome> o = outcome(c, filter.gate());
        return o.isPresent() && filter.outcome().map(o.get()::equals).orElse(true);
    }

    /** The case as a viewer shows it, or null when {@code gate} is given and does not select it. */
    private static ExecutedCase executed(ChunkRows.Row row, Receipt.CaseResult c, Optional<String> gate) {
        Optional<Outcome> selected = outcome(c, gate);
        if (selected.isEmpty()) {
            return null;
        }
        Outcome outcome = selected.get();
        List<EvaluatorOutcome> evaluators = new ArrayList<>();
        for (Receipt.EvaluatorResult e : c.evaluatorResults()) {
            evaluators.add(new EvaluatorOutcome(
                    e.name(),
                    e.passed(),
                    e.score(),
                    e.error().map(Receipt.Error::type),
                    e.error().map(Receipt.Error::message),
                    e.millis(),
                    e.reason()));
        }
        Map<String, String> gates = new LinkedHashMap<>();
        c.gates().forEach((k, v) -> gates.put(k, v.wire));
        return new ExecutedCase(
                c.ordinal(),
                c.id(),
                row.seed().shard(),
                row.chunkIndex(),
                outcome,
                c.errored(),
                c.attempts(),
                c.agentMillis(),
                c.error().map(Receipt.Error::type),
                c.error().map(Receipt.Error::message),
                evaluators,
                gates,
                c.outputLength(),
                c.outputRef().isPresent(),
                c.epochPasses(),
                Math.max(1, c.epochs().size()),
                c.usage().map(u -> UsageTallies.summary(u.models())));
    }

    private static Outcome of(Receipt.GateOutcome g) {
        return switch (g) {
            case PASSED -> Outcome.PASSED;
            case FAILED -> Outcome.FAILED;
            case ERRORED -> Outcome.ERRORED;
        };
    }

    @Override
    public void close() {
        stores.values().forEach(ObjectStore::close);
        stores.clear();
    }
}
