package dev.vigilo.exec.audit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.exec.GateDecision;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.ScratchDirs;
import dev.vigilo.exec.record.AgreementTallies;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.EpochReduction;
import dev.vigilo.exec.record.GateTable;
import dev.vigilo.exec.record.PlanRecord;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.RerunRecords;
import dev.vigilo.exec.record.ReviewRecords;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.record.UsageTable;
import dev.vigilo.exec.record.UsageTallies;
import dev.vigilo.llm.Pricing;
import dev.vigilo.plan.GateFile;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.plan.RunState;
import dev.vigilo.stats.Confidence;
import dev.vigilo.stats.PassAtK;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreBinding;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * {@code vigilo verify RUN_ID}: re-reads a settled (or failed) run end to end and checks it against its own records
 * (docs/execution.md, "Verification"): the dataset (catalog identity, index, every case) and the published plan
 * (root, manifest, configuration, gates, every chunk) against each other ({@link PlanCheck}); the execution records,
 * every receipt and every output and transcript it references against the plan ({@link ExecutionCheck}); and finally
 * the settlement, recomputed independently from the receipts and the frozen gate counts, against the recorded gate
 * table, verdict and status. Every object is read through the reference that names it (length and SHA-256).
 *
 * <p>It stops at the first damaged object or disagreeing figure and reports it; nothing is written anywhere. Memory:
 * what the two passes hold (one dataset case file, one chunk file, one receipt and one transcript at a time) plus 128
 * shard summaries. Thread-safe.
 */
public final class RunVerifier {
    private static final Duration READ = Duration.ofSeconds(120);

    /**
     * What was read and checked.
     *
     * @param datasetCases           dataset cases verified (each against its chunk entry)
     * @param caseFiles              dataset case files read
     * @param indexDocuments         dataset index documents read
     * @param chunks                 chunks of the plan (each chunk file read twice: once per pass)
     * @param receipts               receipts read
     * @param outputs                outputs stored apart read
     * @param transcripts            transcripts read and judged by the session-log reader
     * @param casesWithoutTranscripts executed cases whose receipt (version 1) references no transcript
     */
    public record Checked(
            long datasetCases,
            long caseFiles,
            long indexDocuments,
            long chunks,
            long receipts,
            long outputs,
            long transcripts,
            long casesWithoutTranscripts) {
        static final Checked NONE = new Checked(0, 0, 0, 0, 0, 0, 0, 0);
    }

    /**
     * The outcome.
     *
     * @param status     the run's recorded status ({@code settled} or {@code failed})
     * @param verdict    the run's recorded verdict
     * @param intact     whether every check passed
     * @param damagedKey the first damaged object, when one object is to blame
     * @param problem    what the first failed check found (figures included); empty when intact
     * @param checked    what was read before the end (everything, when intact)
     * @param gates      the gate table recomputed from the receipts (empty when a check failed before)
     * @param reviews    the human review records checked (docs/execution.md, "Human review")
     */
    public record Report(
            UUID runId,
            String status,
            Optional<String> verdict,
            boolean intact,
            Optional<String> damagedKey,
            Optional<String> problem,
            Checked checked,
            List<GateResult> gates,
            Reviews reviews) {
        public Report {
            gates = List.copyOf(gates);
            Objects.requireNonNull(reviews, "reviews");
        }
    }

    /**
     * The review overrides checked: every row against the object it references, and each override in force against
     * the case's execution now.
     *
     * @param overrides override rows checked (superseded ones included)
     * @param current   overrides in force (the latest of each case)
     * @param stale     the overrides in force whose case was executed again after them (not applied by the reviewed
     *                  gate table: review those cases again), one line each: {@code case ORDINAL (ID): override SEQ
     *                  ...}; stale is not damage
     */
    public record Reviews(long overrides, long current, List<String> stale) {
        public static final Reviews NONE = new Reviews(0, 0, List.of());

        public Reviews {
            stale = List.copyOf(stale);
        }
    }

    private final Placements placements;
    private final StorageConfig storage;
    private final Jdbi control;

    public RunVerifier(Placements placements, StorageConfig storage) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.storage = Objects.requireNonNull(storage, "storage");
        this.control = placements.control();
    }

    /**
     * Verifies the run.
     *
     * @return the report; damage is reported in it, never thrown
     * @throws NotFoundException     no such run
     * @throws InvalidInputException the run has not ended (settled or failed), was cancelled (it ended without a
     *                               result to check), or a store is not configured
     * @throws UnavailableException  a database or a store cannot be reached
     */
    public Report verify(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        RunRecords.Run run = control.withHandle(h -> RunRecords.run(h, runId));
        if (run.status() == RunState.CANCELLED) {
            // Ended, but without a settlement: nothing recorded to recompute, and waiting changes nothing.
            throw new InvalidInputException("run " + runId + " was cancelled: it ended without settling, so there is"
                    + " no gate table or verdict to check; `vigilo run results " + runId + "` lists the chunks it"
                    + " committed, each receipt verified against its reference");
        }
        if (run.status() != RunState.SETTLED && run.status() != RunState.FAILED) {
            throw new InvalidInputException("run " + runId + " is " + run.status() + "; verify checks a run that has"
                    + " ended: wait until it settles (`vigilo run watch " + runId + "`)");
        }
        PlanRecord record =
                control.withHandle(h -> PlanRecord.find(h, runId)).orElseThrow(() -> RunRecords.notFound(runId));
        Progress p = new Progress();
        Path scratch = null;
        try (ObjectStore store = ObjectStores.open(record.store(storage))) {
            scratch = Files.createTempDirectory("vigilo-verify-");
            List<GateResult> gates = check(run, record, store, scratch, p);
            Reviews reviews = checkReviews(runId, store);
            return new Report(
                    runId,
                    run.status().spelling(),
                    run.verdict(),
                    true,
                    Optional.empty(),
                    Optional.empty(),
                    p.checked(),
                    gates,
                    reviews);
        } catch (DamagedException e) {
            return new Report(
                    runId,
                    run.status().spelling(),
                    run.verdict(),
                    false,
                    VerificationFailure.keyOf(e),
                    Optional.of(e.getMessage()),
                    p.checked(),
                    List.of(),
                    Reviews.NONE);
        } catch (IOException e) {
            throw new UnavailableException(
                    "cannot create a temporary directory for verification: " + e.getMessage(), e);
        } finally {
            ScratchDirs.delete(scratch);
        }
    }

    /** What the passes read so far, for the report. */
    private static final class Progress {
        PlanCheck plan;
        ExecutionCheck execution;

        Checked checked() {
            if (plan == null) {
                return Checked.NONE;
            }
            var d = plan.datasetReport();
            return new Checked(
                    d == null ? 0 : d.caseCount(),
                    d == null ? 0 : d.caseFiles(),
                    d == null ? 0 : d.indexDocuments(),
                    plan.chunks(),
                    execution == null ? 0 : execution.receipts,
                    execution == null ? 0 : execution.outputs,
                    execution == null ? 0 : execution.transcripts,
                    execution == null ? 0 : execution.casesWithoutTranscripts);
        }
    }

    private List<GateResult> check(RunRecords.Run run, PlanRecord record, ObjectStore store, Path scratch, Progress p) {
        UUID runId = run.runId();
        PublishedPlan plan = record.plan(store, READ);
        JsonNode configuration = plan.configuration(Deadline.after(READ));
        List<GateFile> gates = plan.gates(Deadline.after(READ));
        DatasetEntry dataset = new DatasetCatalog(control).get(plan.manifest().datasetUploadId());
        p.plan = new PlanCheck(runId, plan, store, gates, configuration);
        try (ObjectStore datasetStore = dataset.storage().equals(new StoreBinding(record.storageBinding()))
                ? null
                : ObjectStores.open(storage.resolve(dataset.storage())
                        .orElseThrow(() -> new InvalidInputException("dataset " + dataset.uploadId() + " is stored in "
                                + dataset.storage() + ", which the storage configuration does not resolve")))) {
            p.plan.run(dataset, datasetStore == null ? store : datasetStore, record, configuration, control);
        }
        List<RunRecords.Route> routes = control.withHandle(h -> RunRecords.routes(h, runId, ""));
        p.execution = new ExecutionCheck(
                runId,
                plan,
                store,
                gates,
                p.plan.evaluators(),
                EpochReduction.of(configuration),
                pricing(configuration),
                scratch);
        List<RerunRecords.Settled> history = control.withHandle(h -> RerunRecords.history(h, runId));
        for (int g = 0; g < history.size(); g++) {
            p.execution.earlier.add(new long[3][gates.size()]);
            p.execution.earlierMissing.add(new long[1]);
        }
        p.execution.checkSnapshots(placements, routes, record.storageBinding());
        p.execution.checkChunks(ChunkRows.cursor(placements, runId, routes, false));
        checkHistory(history, gates, p.execution);
        return settlement(run, gates, p.execution);
    }

    /**
     * Each earlier settlement of a rerun run (its rerun history) must hold the gate counts the receipts in effect at
     * its generation give: an altered earlier receipt fails its digest when read, an altered history row here.
     */
    private static void checkHistory(List<RerunRecords.Settled> history, List<GateFile> gates, ExecutionCheck ex) {
        for (int i = 0; i < history.size(); i++) {
            RerunRecords.Settled h = history.get(i);
            if (h.generation() != i + 1) {
                throw new VerificationFailure(
                        null,
                        "the rerun history lists generation " + h.generation() + " where " + (i + 1) + " was due");
            }
            long[][] t = ex.earlier.get(i);
            StringBuilder recomputed = new StringBuilder("[");
            for (int g = 0; g < gates.size(); g++) {
                recomputed
                        .append(g == 0 ? "" : ", ")
                        .append(gates.get(g).gate().name())
                        .append(": ")
                        .append(t[0][g])
                        .append(" passed, ")
                        .append(t[1][g])
                        .append(" failed, ")
                        .append(t[2][g])
                        .append(" errored");
            }
            recomputed.append(']');
            boolean same = h.gates().size() == gates.size() || (h.gates().isEmpty() && "failed".equals(h.status()));
            for (int g = 0; same && g < h.gates().size(); g++) {
                var row = h.gates().get(g);
                same = row.path("name").asText().equals(gates.get(g).gate().name())
                        && row.path("planned").asLong(-1) == gates.get(g).selectedCases()
                        && row.path("passed").asLong(-1) == t[0][g]
                        && row.path("failed").asLong(-1) == t[1][g]
                        && row.path("errored").asLong(-1) == t[2][g];
            }
            if (!same) {
                throw new VerificationFailure(
                        null,
                        "settlement generation " + h.generation() + " of the rerun history records the gates "
                                + h.gates() + "; the receipts in effect then give " + recomputed);
            }
            if (h.gates().isEmpty()) {
                continue; // failed for damaged records: no table, no verdict to recompute
            }
            // Each gate decided by its frozen rule, and the outcome that follows, as settlement decided then.
            List<GateResult> decided = new ArrayList<>();
            for (int g = 0; g < gates.size(); g++) {
                GateFile gf = gates.get(g);
                GateResult r = GateResult.decided(
                        gf.gate().name(),
                        gf.selectedCases(),
                        t[0][g],
                        t[1][g],
                        t[2][g],
                        gf.gate().minPassRate(),
                        gf.gate().decide(),
                        Confidence.of(gf.gate().confidence()));
                decided.add(r);
                String recorded = h.gates().get(g).path("decision").asText("");
                if (!recorded.equals(r.decision().map(GateDecision::spelling).orElse(""))) {
                    throw new VerificationFailure(
                            null,
                            "settlement generation " + h.generation() + " of the rerun history records gate "
                                    + gf.gate().name() + " " + recorded + "; its counts then decide "
                                    + r.decision().map(GateDecision::spelling).orElse("nothing"));
                }
            }
            boolean failed = ex.earlierMissing.get(i)[0] > 0;
            String status = failed ? RunState.FAILED.spelling() : RunState.SETTLED.spelling();
            Optional<String> verdict = failed
                    ? Optional.empty()
                    : Optional.of(GateResult.verdict(decided).spelling());
            if (!h.status().equals(status) || !h.verdict().equals(verdict)) {
                throw new VerificationFailure(
                        null,
                        "settlement generation " + h.generation() + " of the rerun history records status "
                                + h.status() + " and verdict " + h.verdict().orElse("none") + "; "
                                + ex.earlierMissing.get(i)[0] + " chunks without a receipt then and its gates give "
                                + status + " and " + verdict.orElse("none"));
            }
        }
    }

    /**
     * The gate table and verdict recomputed from the receipts' outcomes and the frozen planned counts and policy
     * (threshold, rule, confidence): each recorded row must hold the same counts, policy and decision, and the
     * interval it recorded must be the one recomputed (rows settled before intervals were recorded hold none).
     */
    private List<GateResult> settlement(RunRecords.Run run, List<GateFile> gates, ExecutionCheck ex) {
        List<GateResult> table = new ArrayList<>();
        for (int g = 0; g < gates.size(); g++) {
            GateFile gf = gates.get(g);
            GateResult decided = GateResult.decided(
                    gf.gate().name(),
                    gf.selectedCases(),
                    ex.passed[g],
                    ex.failed[g],
                    ex.errored[g],
                    gf.gate().minPassRate(),
                    gf.gate().decide(),
                    Confidence.of(gf.gate().confidence()));
            int n = ex.epochs();
            if (n > 1) {
                decided = decided.withPassAtK(
                        PassAtK.of(java.util.Arrays.copyOfRange(ex.epochPasses, g * (n + 1), (g + 1) * (n + 1))));
            }
            table.add(decided);
        }
        List<GateTable.Row> recorded = control.withHandle(h -> GateTable.read(h, run.runId()));
        if (recorded.size() != table.size()) {
            throw new VerificationFailure(
                    null,
                    "the run records " + recorded.size() + " gate results, the plan has " + table.size() + " gates");
        }
        for (int g = 0; g < table.size(); g++) {
            GateResult t = table.get(g);
            GateTable.Row row = recorded.get(g);
            GateResult r = row.gate();
            if (!r.equals(t)) {
                throw new VerificationFailure(
                        null,
                        "gate " + t.name() + ": the run records " + describe(r) + "; the receipts give " + describe(t));
            }
            GateTable.Interval recomputed = GateTable.Interval.of(t.interval());
            if (row.recorded().isPresent() && !row.recorded().get().equals(recomputed)) {
                throw new VerificationFailure(
                        null,
                        "gate " + t.name() + ": the run records the interval "
                                + row.recorded().get() + "; the receipts give " + recomputed);
            }
        }
        Map<String, List<Receipt.ModelUsage>> usage = control.withHandle(h -> UsageTable.read(h, run.runId()));
        if (!usage.equals(UsageTallies.withCalls(ex.usage))) {
            throw new VerificationFailure(
                    null,
                    "the run records usage " + usage + "; the receipts give " + ex.usage
                            + " (tokens and cost per scope, role and model)");
        }
        var agreement = control.withHandle(h -> AgreementTallies.recorded(h, run.runId()));
        if (!agreement.equals(ex.agreement)) {
            throw new VerificationFailure(
                    null, "the run records judge agreement sums " + agreement + "; the receipts give " + ex.agreement);
        }
        RunState status = ex.failedChunks > 0 ? RunState.FAILED : RunState.SETTLED;
        Optional<String> verdict = ex.failedChunks > 0
                ? Optional.empty()
                : Optional.of(GateResult.verdict(table).spelling());
        if (status != run.status() || !verdict.equals(run.verdict())) {
            throw new VerificationFailure(
                    null,
                    "the run records status " + run.status() + " and verdict "
                            + run.verdict().orElse("none") + "; "
                            + ex.failedChunks + " failed chunks and the recomputed gates give " + status + " and "
                            + verdict.orElse("none"));
        }
        return table;
    }

    /**
     * The review overrides (docs/formats/review-override.md): each row's object is read through the row's reference
     * (a missing or altered object is damage naming it), parsed, and must say what the row says; a superseding
     * override must name the object of the override it supersedes, of the same case, and only the latest of a case
     * may be unsuperseded. The overrides in force are compared with the cases' executions now: a case executed again
     * makes its override stale, reported but not damage.
     */
    private Reviews checkReviews(UUID runId, ObjectStore store) {
        List<ReviewRecords.Row> rows = control.withHandle(h -> ReviewRecords.rows(h, runId));
        if (rows.isEmpty()) {
            return Reviews.NONE;
        }
        Map<Long, ReviewRecords.Row> latest = new java.util.TreeMap<>();
        for (ReviewRecords.Row r : rows) {
            String key = r.record().key().value();
            byte[] bytes = ChunkRows.read(store, r.record(), "review override " + key);
            ReviewRecords.Document d = ReviewRecords.parse(key, bytes);
            Optional<String> diff = ReviewRecords.difference(runId, r, d);
            if (diff.isPresent()) {
                throw new VerificationFailure(
                        key, "review override " + r.seq() + " (" + key + ") disagrees with its row: " + diff.get());
            }
            ReviewRecords.Row previous = latest.get(r.ordinal());
            Optional<Long> expected = Optional.ofNullable(previous).map(ReviewRecords.Row::seq);
            if (!r.supersedes().equals(expected)) {
                throw new VerificationFailure(
                        null,
                        "review override " + r.seq() + " of case " + r.ordinal() + " supersedes "
                                + r.supersedes().map(String::valueOf).orElse("nothing") + "; the case's previous"
                                + " override is "
                                + expected.map(String::valueOf).orElse("none"));
            }
            Optional<String> named =
                    Optional.ofNullable(previous).map(x -> x.record().sha256().toHex());
            if (!d.supersedes().equals(named)) {
                throw new VerificationFailure(
                        key,
                        "review override " + r.seq() + " (" + key + ") names the superseded record "
                                + d.supersedes().orElse("none") + "; the case's previous override's record is "
                                + named.orElse("none"));
            }
            latest.put(r.ordinal(), r);
        }
        List<RunRecords.Route> routes = control.withHandle(h -> RunRecords.routes(h, runId, ""));
        Map<Long, ReviewRecords.Machine> now =
                ReviewRecords.machines(placements, runId, routes, store, latest.keySet());
        List<String> stale = new ArrayList<>();
        for (ReviewRecords.Row r : latest.values()) {
            ReviewRecords.Machine m = now.get(r.ordinal());
            if (m == null) {
                stale.add("case " + r.ordinal() + " (" + r.caseId() + "): override " + r.seq()
                        + " judged an execution the run no longer holds");
            } else if (!m.executionSha256().equals(r.executionSha256())) {
                stale.add("case " + r.ordinal() + " (" + r.caseId() + "): override " + r.seq() + " overrode "
                        + r.original() + "; the case was executed again since and is now " + m.outcome()
                        + "; review it again");
            } else if (!m.outcome().equals(r.original())) {
                throw new VerificationFailure(
                        r.record().key().value(),
                        "review override " + r.seq() + " of case " + r.ordinal() + " says it overrode " + r.original()
                                + "; the receipt it judged records " + m.outcome());
            }
        }
        return new Reviews(rows.size(), latest.size(), stale);
    }

    private static Pricing pricing(JsonNode configuration) {
        try {
            return Pricing.fromJson(configuration.path("profile").path("pricing"));
        } catch (IllegalArgumentException e) {
            throw new VerificationFailure(null, "the frozen profile's pricing is invalid: " + e.getMessage());
        }
    }

    private static String describe(GateResult g) {
        return g.planned() + " planned, " + g.passed() + " passed, " + g.failed() + " failed, " + g.errored()
                + " errored, min_pass_rate " + g.minPassRate() + " decided on the "
                + g.decide().wire() + " at "
                + g.confidence() + ": "
                + g.decision().map(GateDecision::spelling).orElse("undecided")
                + g.passAtK()
                        .map(h -> ", epoch pass counts " + java.util.Arrays.toString(h.histogram()))
                        .orElse("");
    }
}
