package dev.vigilo.exec.settlement;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.AgreementTallies;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.GateTable;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.ReceiptParser;
import dev.vigilo.exec.record.RerunRecords;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.record.UsageTable;
import dev.vigilo.plan.PlanShape;
import dev.vigilo.plan.RunLifecycle;
import dev.vigilo.plan.RunState;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreBinding;
import dev.vigilo.storage.StoreSpec;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code vigilo run rerun-errors} (docs/execution.md, "Rerun errors"): executes again only the errored cases (or
 * epochs) of a settled or failed run, then lets it settle again.
 *
 * <p>{@link #plan} (the dry run) reads the run's done chunk rows whose tallies count an errored case, reads their
 * receipts through their references and lists every errored execution by its error type, and the failed chunks (whose
 * cases never ran); it changes nothing. {@link #rerun} does the same reads, then, in one control transaction holding
 * the run row {@code FOR UPDATE} (settlement, which takes the same lock, cannot interleave): queues those chunks again
 * in each execution database (a local transaction each, committed inside the control one, as admission does), keeps
 * the run's current outcome and gate table in the rerun history as its settlement generation, clears the settled
 * tables and reopens the run ({@link RunLifecycle#reopen}: pending, dispatchable). Workers then execute only the
 * errored executions of each queued chunk and carry the rest forward (receipt version 6); the coordinator settles the
 * run once they are done. A reopening interrupted after some local commits leaves those chunks queued for the same
 * generation, and repeating the command finishes it. Thread-safe.
 */
public final class RunRerun {
    private static final Logger LOG = LoggerFactory.getLogger(RunRerun.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The type a failed chunk's cases are listed under: they never ran, so they have no error of their own. */
    public static final String CHUNK_FAILED = "chunk_failed";

    /**
     * One case to execute again.
     *
     * @param type    the error type of its first errored execution (the agent's, e.g. {@code server_error},
     *                {@code timeout}, {@code limit_exceeded}; or the first errored required evaluator's), or
     *                {@link #CHUNK_FAILED}
     * @param message that error's message (one line, secrets masked as recorded), or the failed chunk's last error
     * @param epochs  its epochs to execute again (1-based), in a run of several epochs; empty otherwise
     */
    public record Case(long chunk, long ordinal, String id, String type, String message, List<Integer> epochs) {
        public Case {
            epochs = List.copyOf(epochs);
        }
    }

    /**
     * What a rerun executes again.
     *
     * @param status     the run's state when read
     * @param generation the settlement generation the rerun executes for (2 for a run's first rerun)
     * @param chunks     the chunks to queue again
     * @param cases      the cases to execute again, in ordinal order (a failed chunk's: one entry for the chunk,
     *                   ordinal its first case's, id empty)
     */
    public record Plan(UUID runId, RunState status, int generation, List<Long> chunks, List<Case> cases) {
        public Plan {
            chunks = List.copyOf(chunks);
            cases = List.copyOf(cases);
        }

        /** The cases by error type, types in alphabetical order. */
        public Map<String, List<Case>> byType() {
            Map<String, List<Case>> out = new TreeMap<>();
            cases.forEach(
                    c -> out.computeIfAbsent(c.type(), t -> new ArrayList<>()).add(c));
            return Collections.unmodifiableMap(out);
        }

        /** Whether nothing errored: nothing to execute again. */
        public boolean empty() {
            return chunks.isEmpty();
        }
    }

    /** What {@link #rerun} did. */
    public enum Outcome {
        /** The run was reopened; its queued chunks execute at the next claims of a worker. */
        REOPENED,
        /** No case of the run errored: nothing changed. */
        NOTHING_TO_RERUN
    }

    /**
     * @param plan   what was (or would have been) queued again
     * @param queued the chunk rows this call queued (rows an interrupted earlier call queued are not counted again)
     */
    public record Result(Outcome outcome, Plan plan, int queued) {}

    private final Placements placements;
    private final StorageConfig storage;

    public RunRerun(Placements placements, StorageConfig storage) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.storage = Objects.requireNonNull(storage, "storage");
    }

    /**
     * What {@link #rerun} would execute again, changing nothing.
     *
     * @throws NotFoundException     no such run
     * @throws ConflictException     the run has not ended (creating, pending, running, paused), was cancelled (it
     *                               never settles, so it is never rerun), or its receipts were written before version 4
     *                               (no usage to carry forward)
     * @throws InvalidInputException the storage configuration does not resolve the run's store
     * @throws UnavailableException  a database or the store cannot be reached; nothing changed
     */
    public Plan plan(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        RunRecords.Run run = placements.control().withHandle(h -> RunRecords.run(h, runId));
        checkEnded(run);
        int generation = placements.control().withHandle(h -> RerunRecords.settledGenerations(h, runId)) + 2;
        List<RunRecords.Route> routes = placements.control().withHandle(h -> RunRecords.routes(h, runId, ""));
        List<RerunRecords.Candidate> candidates = new ArrayList<>();
        for (var group : RunRecords.byPlacement(routes).entrySet()) {
            candidates.addAll(LocalTransactions.inTransaction(
                    placements.jdbi(group.getKey()),
                    "reading the errored chunks of run " + runId + " in execution database \"" + group.getKey() + "\"",
                    h -> RerunRecords.candidates(h, runId, group.getValue(), generation)));
        }
        candidates.sort((a, b) -> Long.compare(a.seed().chunkIndex(), b.seed().chunkIndex()));
        List<Long> chunks = new ArrayList<>();
        List<Case> cases = new ArrayList<>();
        StoreSpec spec = storage.resolve(new StoreBinding(run.storageBinding()))
                .orElseThrow(() -> new InvalidInputException("run " + runId + ": its receipts are stored in "
                        + run.storageBinding() + ", which the storage configuration does not name; run the command"
                        + " with that store"));
        try (ObjectStore store = ObjectStores.open(spec)) {
            for (RerunRecords.Candidate c : candidates) {
                long index = c.seed().chunkIndex();
                if (c.receipt().isEmpty()) {
                    chunks.add(index);
                    cases.add(new Case(
                            index,
                            c.seed().firstOrdinal(),
                            "",
                            CHUNK_FAILED,
                            c.lastError().orElse("the chunk failed"),
                            List.of()));
                    continue;
                }
                String key = c.receipt().get().key().value();
                Receipt r = ReceiptParser.fromJson(
                        ChunkRows.read(store, c.receipt().get(), "receipt " + key + " of chunk " + index), key);
                List<Case> errored = errored(index, r, key);
                if (!errored.isEmpty()) {
                    chunks.add(index);
                    cases.addAll(errored);
                }
            }
        }
        cases.sort((a, b) -> Long.compare(a.ordinal(), b.ordinal()));
        return new Plan(runId, run.status(), generation, chunks, cases);
    }

    private static void checkEnded(RunRecords.Run run) {
        switch (run.status()) {
            case SETTLED, FAILED -> {}
            case CANCELLED ->
                throw new ConflictException("run " + run.runId() + " was cancelled; a cancelled run never"
                        + " settles, so it is not rerun: create a new run");
            default ->
                throw new ConflictException(
                        "run " + run.runId() + " is " + run.status().spelling()
                                + "; only a settled or failed run can rerun its errors: wait until `vigilo run status "
                                + run.runId() + "` says settled or failed");
        }
    }

    /** The errored executions of receipt {@code r}, one entry per case. */
    private static List<Case> errored(long chunk, Receipt r, String key) {
        List<Case> out = new ArrayList<>();
        for (Receipt.CaseResult c : r.cases()) {
            if (c.usage().isEmpty()) {
                throw new ConflictException("receipt " + key + " was written before version 4 and records no usage;"
                        + " a rerun could not count its calls once: create a new run instead");
            }
            List<Receipt.CaseResult> executions = c.epochs().isEmpty() ? List.of(c) : c.epochs();
            List<Integer> epochs = new ArrayList<>();
            Receipt.CaseResult first = null;
            for (int e = 0; e < executions.size(); e++) {
                if (Receipt.erroredExecution(executions.get(e))) {
                    epochs.add(e + 1);
                    first = first == null ? executions.get(e) : first;
                }
            }
            if (first == null) {
                continue;
            }
            Receipt.Error error = errorOf(first);
            out.add(new Case(
                    chunk,
                    c.ordinal(),
                    c.id(),
                    error.type(),
                    error.message(),
                    c.epochs().isEmpty() ? List.of() : epochs));
        }
        return out;
    }

    /** The agent's error, else the first errored evaluator's (a gate errored because a required evaluator did). */
    private static Receipt.Error errorOf(Receipt.CaseResult x) {
        if (x.error().isPresent()) {
            return x.error().get();
        }
        for (Receipt.EvaluatorResult e : x.evaluatorResults()) {
            if (e.error().isPresent()) {
                return e.error().get();
            }
        }
        return new Receipt.Error("errored", "a gate errored");
    }

    /**
     * Reopens the run to execute its errored cases again.
     *
     * @return {@link Outcome#NOTHING_TO_RERUN} (nothing changed) when no case errored and no chunk failed
     * @throws NotFoundException     no such run
     * @throws ConflictException     as {@link #plan}, or the run changed state while being reopened
     * @throws InvalidInputException as {@link #plan}
     * @throws UnavailableException  a database or the store cannot be reached; repeat the command
     */
    public Result rerun(UUID runId) {
        Plan plan = plan(runId);
        if (plan.empty()) {
            return new Result(Outcome.NOTHING_TO_RERUN, plan, 0);
        }
        int queued = placements.control().inTransaction(h -> {
            RunRecords.Run run = RunRecords.lock(h, runId, true);
            checkEnded(run);
            if (RerunRecords.settledGenerations(h, runId) + 2 != plan.generation()) {
                throw new ConflictException("run " + runId + " was rerun by another command meanwhile; look at"
                        + " `vigilo run status " + runId + "`");
            }
            List<RunRecords.Route> routes = RunRecords.routes(h, runId, "FOR SHARE");
            int n = 0;
            for (var group : RunRecords.byPlacement(routes).entrySet()) {
                List<Long> mine = new ArrayList<>();
                for (long chunk : plan.chunks()) {
                    if (group.getValue().contains((int) (chunk % PlanShape.SHARDS))) {
                        mine.add(chunk);
                    }
                }
                if (mine.isEmpty()) {
                    continue;
                }
                n += LocalTransactions.inTransaction(
                        placements.jdbi(group.getKey()),
                        "queueing the errored chunks of run " + runId + " in execution database \"" + group.getKey()
                                + "\"",
                        l -> RerunRecords.requeue(l, runId, mine, plan.generation()));
            }
            RerunRecords.keep(h, runId, plan.generation() - 1, gatesJson(GateTable.results(h, runId)), rerunJson(plan));
            GateTable.clearForRerun(h, runId);
            UsageTable.clearForRerun(h, runId);
            AgreementTallies.clearForRerun(h, runId);
            if (!RunLifecycle.reopen(h, runId)) {
                throw new IllegalStateException("run " + runId + " changed while its reopening held its row");
            }
            return n;
        });
        LOG.info(
                "run {} reopened for settlement generation {}: {} cases in {} chunks run again",
                runId,
                plan.generation(),
                plan.cases().size(),
                plan.chunks().size());
        return new Result(Outcome.REOPENED, plan, queued);
    }

    /** The gate table kept in the history: counts and decisions, in gate order. */
    static String gatesJson(List<GateResult> gates) {
        ArrayNode a = JSON.createArrayNode();
        for (GateResult g : gates) {
            a.addObject()
                    .put("name", g.name())
                    .put("planned", g.planned())
                    .put("passed", g.passed())
                    .put("failed", g.failed())
                    .put("errored", g.errored())
                    .put("decision", g.decision().map(d -> d.spelling()).orElse(null));
        }
        return a.toString();
    }

    /** What the reopening queued again, by error type, for the history. */
    static String rerunJson(Plan plan) {
        ObjectNode o = JSON.createObjectNode();
        o.put("chunks", plan.chunks().size());
        o.put("cases", plan.cases().size());
        ObjectNode byType = o.putObject("by_type");
        plan.byType().forEach((type, cases) -> {
            ArrayNode a = byType.putArray(type);
            for (Case c : cases) {
                ObjectNode x = a.addObject().put("ordinal", c.ordinal()).put("id", c.id());
                c.epochs().forEach(x.putArray("epochs")::add);
            }
        });
        return o.toString();
    }
}
