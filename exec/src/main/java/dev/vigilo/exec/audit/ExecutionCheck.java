package dev.vigilo.exec.audit;

import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.AgreementTallies;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.ChunkSeed;
import dev.vigilo.exec.record.EpochReduction;
import dev.vigilo.exec.record.PartialChain;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.ReceiptParser;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.record.RunSnapshot;
import dev.vigilo.exec.record.RunSnapshotParser;
import dev.vigilo.exec.record.TranscriptStore;
import dev.vigilo.exec.record.UsageTallies;
import dev.vigilo.llm.Pricing;
import dev.vigilo.plan.ChunkFile;
import dev.vigilo.plan.GateFile;
import dev.vigilo.plan.PlanManifest;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.sessionlog.VerifyReport;
import dev.vigilo.stats.KrippendorffAlpha;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The second pass of {@code vigilo verify}: the execution records against the plan. The run snapshot and shard
 * snapshots of every execution database the run is routed to must be what admission derives from the plan; the chunk
 * rows (merged across databases in chunk order) are zipped with the plan's chunks: each row's identity must be its
 * chunk's, a done row's receipt is read through its reference and checked against the row and against the chunk file
 * (cases, evaluators of each mask, gates, each gate outcome recomputed from the evaluator results), and every output
 * and transcript it references is read through its reference (length and SHA-256); a transcript must also be an
 * accepted session log whose writer epoch is the lease generation that executed the case (the receipt's, or for an
 * entry a resumed receipt carried from a partial receipt, that partial's) and whose {@code vigilo/case} event names
 * the case, attempt, epoch and generation that reference it ({@link TranscriptIdentity}). A resumed receipt's partial
 * receipt chain is read and verified, and each carried entry compared with its partial's byte for byte. The per-gate
 * outcomes are summed from the receipts themselves. Memory: one page of rows per database, one chunk file, one receipt and one transcript.
 * Owned by one thread.
 */
final class ExecutionCheck {
    private final UUID runId;
    private final PublishedPlan plan;
    private final ObjectReader store;
    private final List<GateFile> gates;
    private final List<String> evaluators;
    private final EpochReduction reduction;
    private final Pricing pricing;
    private final Path scratch;
    /** The usage per scope summed from the receipts (as settlement sums the chunk rows'). */
    Map<String, List<Receipt.ModelUsage>> usage = Map.of();
    /** The judge agreement sums per scope and panel summed from the receipts. */
    Map<String, Map<String, KrippendorffAlpha.Sums>> agreement = Map.of();

    final long[] passed;
    final long[] failed;
    final long[] errored;
    /** In a run of n > 1 epochs, the epoch pass histograms recomputed from the receipts (as the chunk rows hold them). */
    final long[] epochPasses;

    long failedChunks;
    long doneChunks;
    long receipts;
    long transcripts;
    long outputs;
    long casesWithoutTranscripts;
    long casesExecuted;
    /**
     * Per earlier settlement generation (1 first; as many as the run's rerun history holds), the gate counts it
     * settled on, recomputed from the receipts in effect then: [passed, failed, errored][gate].
     */
    final List<long[][]> earlier = new ArrayList<>();
    /** Per earlier settlement generation, the chunks that had no receipt in effect then (failed, or never done). */
    final List<long[]> earlierMissing = new ArrayList<>();

    ExecutionCheck(
            UUID runId,
            PublishedPlan plan,
            ObjectReader store,
            List<GateFile> gates,
            List<String> evaluators,
            EpochReduction reduction,
            Pricing pricing,
            Path scratch) {
        this.runId = runId;
        this.pricing = pricing;
        this.plan = plan;
        this.store = store;
        this.gates = gates;
        this.evaluators = evaluators;
        this.reduction = reduction;
        this.scratch = scratch;
        this.passed = new long[gates.size()];
        this.failed = new long[gates.size()];
        this.errored = new long[gates.size()];
        int n = reduction.policy().count();
        this.epochPasses = new long[n > 1 ? gates.size() * (n + 1) : 0];
    }

    /** Epochs per case in the run. */
    int epochs() {
        return reduction.policy().count();
    }

    /** The snapshots in each execution database of the run's routes. */
    void checkSnapshots(Placements placements, List<RunRecords.Route> routes, String storageBinding) {
        PlanManifest m = plan.manifest();
        RunSnapshot expected = RunSnapshot.of(runId, plan.root(), storageBinding, m, epochs(), gates);
        List<Integer> published =
                m.shards().stream().map(PlanManifest.Shard::shard).toList();
        List<Integer> routed = routes.stream().map(RunRecords.Route::shard).toList();
        require(
                null,
                routed.equals(published),
                "the run is routed for shards " + routed + ", the plan uses " + published);
        for (var group : RunRecords.byPlacement(routes).entrySet()) {
            String alias = group.getKey();
            String where = "execution database \"" + alias + "\"";
            LocalTransactions.inTransaction(placements.jdbi(alias), "verifying run " + runId + " in " + where, h -> {
                Optional<Map<String, Object>> run = h.createQuery(
                                "SELECT snapshot_sha256, snapshot FROM exec_runs WHERE run_id = :r")
                        .bind("r", runId)
                        .mapToMap()
                        .findOne();
                require(null, run.isPresent(), where + " has no snapshot of the run");
                RunSnapshot read = RunSnapshotParser.fromJson((String) run.get().get("snapshot"));
                require(
                        null,
                        read.sha256().toHex().equals(run.get().get("snapshot_sha256"))
                                && read.sha256().equals(expected.sha256()),
                        "the run snapshot in " + where + " is not the one the plan gives (plan root, configuration,"
                                + " dataset, totals and gate policy)");
                for (Map<String, Object> row : h.createQuery("SELECT shard, cases, chunks, projection_sha256,"
                                + " settlement_sha256, gate_counts, state FROM exec_run_shards WHERE run_id = :r"
                                + " AND shard = ANY(:s) ORDER BY shard")
                        .bind("r", runId)
                        .bindArray("s", Integer.class, group.getValue())
                        .mapToMap()
                        .list()) {
                    int shard = ((Number) row.get("shard")).intValue();
                    PlanManifest.Shard ms = m.shards().stream()
                            .filter(x -> x.shard() == shard)
                            .findFirst()
                            .orElseThrow();
                    StringBuilder counts = new StringBuilder("[");
                    for (int g = 0; g < gates.size(); g++) {
                        long c = gates.get(g).shards().stream()
                                .filter(x -> x.shard() == shard)
                                .mapToLong(GateFile.ShardCount::count)
                                .sum();
                        counts.append(g == 0 ? "" : ",").append(c);
                    }
                    counts.append(']');
                    require(
                            null,
                            ((Number) row.get("cases")).longValue() == ms.cases()
                                    && ((Number) row.get("chunks")).longValue() == ms.chunks()
                                    && ms.projection().toHex().equals(row.get("projection_sha256"))
                                    && ms.settlement().toHex().equals(row.get("settlement_sha256"))
                                    && counts.toString().equals(((String) row.get("gate_counts")).replace(" ", "")),
                            "shard " + shard + "'s snapshot in " + where + " (" + row.get("cases") + " cases, "
                                    + row.get("chunks") + " chunks, gate counts " + row.get("gate_counts")
                                    + ") is not the plan's (" + ms.cases() + ", " + ms.chunks() + ", " + counts + ")");
                }
                return null;
            });
        }
    }

    /** The chunk rows against the plan's chunks, and each done row's receipt, outputs and transcripts. */
    void checkChunks(Iterator<ChunkRows.Row> rows) {
        PlanChunkWalk chunks = new PlanChunkWalk(plan, store);
        for (PlanChunkWalk.Chunk c = chunks.next(); c != null; c = chunks.next()) {
            long index = c.file().chunkIndex();
            ChunkRows.Row row = rows.hasNext() ? rows.next() : null;
            require(
                    null,
                    row != null && row.chunkIndex() == index,
                    "chunk " + index + " has no scheduling row"
                            + (row == null ? "" : " (the next row is chunk " + row.chunkIndex() + ")"));
            require(
                    null,
                    row.seed().equals(ChunkSeed.of(c.file(), c.ref().ref())),
                    "chunk " + index + "'s scheduling row (id " + row.seed().chunkId() + ", "
                            + row.seed().caseCount() + " cases from ordinal "
                            + row.seed().firstOrdinal()
                            + ", file " + row.seed().file().key() + ") is not the plan's chunk");
            switch (row.state()) {
                case "done" -> checkDone(row, c.file());
                case "failed" -> {
                    failedChunks++;
                    earlierMissing.forEach(m -> m[0]++);
                }
                default ->
                    throw new VerificationFailure(
                            null, "chunk " + index + " is still " + row.state() + " in a run that ended");
            }
        }
        if (rows.hasNext()) {
            throw new VerificationFailure(null, "chunk row " + rows.next().chunkIndex() + " has no chunk in the plan");
        }
    }

    private void checkDone(ChunkRows.Row row, ChunkFile chunk) {
        Receipt r = ChunkRows.receipt(runId, store, row);
        String key = row.receipt().orElseThrow().key().value();
        doneChunks++;
        List<Receipt> chain = new ArrayList<>();
        checkReceipt(key, r, chunk, chain);
        for (Receipt.CaseResult c : r.cases()) {
            count(c);
        }
        Map<String, List<Receipt.ModelUsage>> used = new java.util.TreeMap<>();
        r.usageByScope().forEach((scope, u) -> used.put(scope, u.models()));
        usage = UsageTallies.plus(usage, used);
        agreement = AgreementTallies.plus(agreement, r.agreementByScope());
        // The gate tables of earlier settlements: at generation g each chunk counted the newest receipt of its chain
        // written for a generation up to g (a first execution's is generation 1).
        for (int g = 1; g <= earlier.size(); g++) {
            boolean found = false;
            for (Receipt x : chain) {
                if (generation(x) <= g) {
                    found = true;
                    long[][] t = earlier.get(g - 1);
                    List<Receipt.GateTally> tallies = x.tallies();
                    for (int i = 0; i < tallies.size(); i++) {
                        t[0][i] += tallies.get(i).passed();
                        t[1][i] += tallies.get(i).failed();
                        t[2][i] += tallies.get(i).errored();
                    }
                    break;
                }
            }
            if (!found) {
                earlierMissing.get(g - 1)[0]++;
            }
        }
    }

    /** The settlement generation a receipt was written for: its rerun's, else 1 (a chunk's first execution). */
    private static int generation(Receipt r) {
        return r.rerun().map(Receipt.Rerun::generation).orElse(1);
    }

    /**
     * Checks receipt {@code r} of {@code chunk} and, for a rerun's receipt, the receipts before it (read through the
     * reference each names: an altered earlier receipt is damage); adds them to {@code chain}, newest first.
     */
    private void checkReceipt(String key, Receipt r, ChunkFile chunk, List<Receipt> chain) {
        receipts++;
        chain.add(r);
        List<String> gateNames = gates.stream().map(g -> g.gate().name()).toList();
        require(
                key,
                r.evaluators().equals(evaluators) && r.gates().equals(gateNames),
                "receipt " + key + " names evaluators " + r.evaluators() + " and gates " + r.gates() + ", the plan "
                        + evaluators + " and " + gateNames);
        Receipt previous = null;
        if (r.rerun().isPresent() && r.rerun().get().previous().isPresent()) {
            ObjectRef ref = r.rerun().get().previous().get();
            String prevKey = ref.key().value();
            previous = ReceiptParser.fromJson(
                    ChunkRows.read(store, ref, "previous receipt " + prevKey + " of receipt " + key), prevKey);
            require(
                    prevKey,
                    previous.runId().equals(runId)
                            && previous.chunkIndex() == chunk.chunkIndex()
                            && previous.chunkId().equals(chunk.chunkId())
                            && previous.membership().equals(chunk.membership())
                            && previous.cases().size() == r.cases().size()
                            && previous.leaseGeneration() < r.leaseGeneration()
                            && generation(previous) < generation(r),
                    "receipt " + key + " names " + prevKey + " as its previous receipt, which is not an earlier"
                            + " receipt of chunk " + chunk.chunkIndex());
            checkReceipt(prevKey, previous, chunk, chain);
        }
        Map<String, Receipt.Usage> superseded = new java.util.LinkedHashMap<>();
        if (previous != null) {
            previous.rerun().ifPresent(x -> superseded.putAll(x.supersededUsage()));
        }
        if (r.resumed().isPresent()) {
            checkResumed(key, r, chunk);
        }
        for (int i = 0; i < chunk.cases().size(); i++) {
            ChunkFile.Entry e = chunk.cases().get(i);
            Receipt.CaseResult c = r.cases().get(i);
            require(
                    key,
                    c.ordinal() == e.ordinal()
                            && c.id().equals(e.id())
                            && c.caseSha256().equals(e.sha256()),
                    "receipt " + key + " records case \"" + c.id() + "\" at ordinal " + c.ordinal() + " where chunk "
                            + chunk.chunkIndex() + " has \"" + e.id() + "\" at " + e.ordinal());
            Receipt.CaseResult before =
                    previous == null ? null : previous.cases().get(i);
            Optional<Receipt.Executed> executed = r.rerun().flatMap(x -> x.of(c.ordinal()));
            checkCase(key, r, c, e, before, executed, superseded);
        }
        if (r.rerun().isPresent()) {
            require(
                    key,
                    r.rerun().get().supersededUsage().equals(superseded),
                    "receipt " + key + " records the usage of the executions it replaced as "
                            + r.rerun().get().supersededUsage() + ", its previous receipts give " + superseded);
        }
    }

    /**
     * A resumed receipt's (version 7) {@code resumed_from}: the partial receipt chain it names is read from its head
     * and verified link by link ({@link PartialChain}); it carried exactly the chain's entries, each under the lease
     * generation of the link that lists it, and each carried entry is the link's entry byte for byte. The carried
     * entries' executions (their transcripts under their own generation) are checked with the other cases.
     */
    private void checkResumed(String key, Receipt r, ChunkFile chunk) {
        Receipt.Resumed resumed = r.resumed().orElseThrow();
        String head = resumed.head().key().value();
        List<PartialChain.Case> cases = new ArrayList<>();
        for (ChunkFile.Entry e : chunk.cases()) {
            cases.add(new PartialChain.Case(e.ordinal(), e.id(), e.sha256()));
        }
        PartialChain.Chain chain;
        try {
            chain = PartialChain.read(
                    store,
                    resumed.head(),
                    new PartialChain.Expected(
                            runId,
                            chunk.chunkIndex(),
                            chunk.chunkId(),
                            chunk.membership(),
                            generation(r),
                            epochs(),
                            r.leaseGeneration(),
                            cases));
        } catch (dev.vigilo.common.errors.DamagedException e) {
            throw new VerificationFailure(
                    VerificationFailure.keyOf(e).orElse(head),
                    "receipt " + key + " resumed from partial receipt " + head + ", whose chain does not verify: "
                            + e.getMessage());
        }
        List<Long> listed =
                resumed.carried().stream().map(Receipt.Carried::ordinal).toList();
        require(
                key,
                listed.equals(new ArrayList<>(chain.entries().keySet())),
                "receipt " + key + " carried cases " + listed + ", its partial receipt chain from " + head + " holds "
                        + chain.entries().keySet());
        for (Receipt.Carried carried : resumed.carried()) {
            PartialChain.Entry entry = chain.entries().get(carried.ordinal());
            Receipt.CaseResult c = r.cases().stream()
                    .filter(x -> x.ordinal() == carried.ordinal())
                    .findFirst()
                    .orElseThrow();
            require(
                    key,
                    entry.generation() == carried.generation(),
                    "receipt " + key + " carried case \"" + c.id() + "\" as executed under lease generation "
                            + carried.generation() + ", its partial receipt was written under "
                            + entry.generation());
            require(
                    key,
                    java.util.Arrays.equals(ReceiptParser.caseBytes(c), entry.bytes()),
                    "case \"" + c.id() + "\" in receipt " + key + " was carried forward from partial receipt chain "
                            + head + ", and differs from the entry there");
        }
    }

    /** The lease generation that executed case {@code c} of {@code r}: a carried entry's, else the receipt's. */
    private static long executedUnder(Receipt r, Receipt.CaseResult c) {
        return r.resumed()
                .flatMap(x -> x.of(c.ordinal()))
                .map(Receipt.Carried::generation)
                .orElse(r.leaseGeneration());
    }

    /**
     * One case of a receipt: in a rerun's receipt, an entry carried forward must be its previous receipt's, and only
     * executions that ended errored there may have run again (their usage is added to {@code superseded}); every
     * execution this receipt ran is checked in full.
     */
    private void checkCase(
            String key,
            Receipt r,
            Receipt.CaseResult c,
            ChunkFile.Entry e,
            Receipt.CaseResult before,
            Optional<Receipt.Executed> executed,
            Map<String, Receipt.Usage> superseded) {
        String what = "case \"" + c.id() + "\" in receipt " + key;
        int n = epochs();
        require(
                key,
                n == 1 ? c.epochs().isEmpty() : c.epochs().size() == n,
                what + " records " + Math.max(1, c.epochs().size()) + " epochs, the run executes every case " + n
                        + (n == 1 ? " time" : " times"));
        if (r.rerun().isPresent() && before == null) {
            // A failed chunk executed again whole: the rerun lists every case, every epoch.
            require(
                    key,
                    executed.isPresent() && executed.get().epochs().size() == (n == 1 ? 0 : n),
                    what + " is not listed as executed, though the receipt has no previous receipt");
        }
        if (before != null && executed.isEmpty()) {
            require(
                    key,
                    c.equals(before),
                    what + " was carried forward, and differs from the entry of its previous receipt");
            return;
        }
        if (n == 1) {
            if (before != null) {
                require(
                        key,
                        Receipt.erroredExecution(before),
                        what + " was executed again, but it had not errored in the previous receipt");
                addSuperseded(superseded, before, before);
            }
            checkExecution(key, r, c, e, what, 0, executedUnder(r, c));
            return;
        }
        List<Integer> ran = executed.map(Receipt.Executed::epochs).orElse(List.of());
        for (int i = 0; i < n; i++) {
            boolean again = before == null || ran.contains(i + 1);
            if (!again) {
                require(
                        key,
                        c.epochs().get(i).equals(before.epochs().get(i)),
                        what + ", epoch " + (i + 1) + " was carried forward, and differs from its previous receipt's");
                continue;
            }
            if (before != null) {
                require(
                        key,
                        Receipt.erroredExecution(before.epochs().get(i)),
                        what + ", epoch " + (i + 1) + " was executed again, but it had not errored before");
                addSuperseded(superseded, before, before.epochs().get(i));
            }
            checkExecution(key, r, c.epochs().get(i), e, what + ", epoch " + (i + 1), i + 1, executedUnder(r, c));
        }
        Receipt.CaseResult reduced;
        try {
            reduced = reduction.reduce(c.epochs());
        } catch (IllegalArgumentException x) {
            throw new VerificationFailure(key, what + ": its epochs cannot be reduced: " + x.getMessage());
        }
        require(
                key,
                reduced.equals(c),
                what + " records " + summary(c) + ", its epochs reduce ("
                        + reduction.policy().reducer() + ") to " + summary(reduced));
    }

    /** The usage of {@code replaced}, an execution of case {@code c}, added to its scopes ("*" and its gates). */
    private static void addSuperseded(
            Map<String, Receipt.Usage> superseded, Receipt.CaseResult c, Receipt.CaseResult replaced) {
        Receipt.Usage u = replaced.usage().orElse(Receipt.Usage.NONE);
        superseded.merge(Receipt.ALL_CASES, u, Receipt.Usage::plus);
        for (String g : c.gates().keySet()) {
            superseded.merge(g, u, Receipt.Usage::plus);
        }
    }

    /** Adds a counted (final) case's gate outcomes and epoch passes. */
    private void count(Receipt.CaseResult c) {
        casesExecuted++;
        int n = epochs();
        for (int g = 0; g < gates.size(); g++) {
            Receipt.GateOutcome o = c.gates().get(gates.get(g).gate().name());
            if (o == null) {
                continue;
            }
            switch (o) {
                case PASSED -> passed[g]++;
                case FAILED -> failed[g]++;
                case ERRORED -> errored[g]++;
            }
            if (n > 1 && o != Receipt.GateOutcome.ERRORED) {
                epochPasses[
                        g * (n + 1) + c.epochPasses().get(gates.get(g).gate().name())]++;
            }
        }
    }

    /** What a reduced result says, for a message: status, evaluators and gate outcomes. */
    private static String summary(Receipt.CaseResult c) {
        StringBuilder b = new StringBuilder(c.errored() ? "errored" : "ok");
        for (Receipt.EvaluatorResult e : c.evaluatorResults()) {
            b.append(", ")
                    .append(e.name())
                    .append(' ')
                    .append(e.error().isPresent() ? "errored" : e.passed() ? "passed" : "failed")
                    .append(" (score ")
                    .append(e.score())
                    .append(')');
        }
        c.gates().forEach((g, o) -> b.append(", gate ").append(g).append(' ').append(o.wire));
        b.append(", ").append(c.attempts()).append(" attempts");
        return b.toString();
    }

    /**
     * One execution of a case (the case itself in a run of one epoch, else one of its epochs, 1-based): consistent,
     * the evaluators of its mask, each selecting gate's outcome recomputed from its evaluator results, its output and
     * its transcripts.
     */
    private void checkExecution(
            String key, Receipt r, Receipt.CaseResult c, ChunkFile.Entry e, String what, int epoch, long generation) {
        List<String> applied = new ArrayList<>();
        for (int i = 0; i < evaluators.size(); i++) {
            if ((e.evaluators() & (1L << i)) != 0) {
                applied.add(evaluators.get(i));
            }
        }
        List<String> ran =
                c.evaluatorResults().stream().map(Receipt.EvaluatorResult::name).toList();
        require(
                key,
                c.attempts() >= 1
                        && c.errored() == c.error().isPresent()
                        && c.errored() != c.outputSha256().isPresent(),
                what + " is inconsistent: attempts " + c.attempts() + ", status " + (c.errored() ? "errored" : "ok")
                        + ", error " + c.error().isPresent() + ", output "
                        + c.outputSha256().isPresent());
        require(
                key,
                c.errored() ? ran.isEmpty() : ran.equals(applied),
                what + " has results of evaluators " + ran + ", its evaluator mask names " + applied);
        for (int g = 0; g < gates.size(); g++) {
            String name = gates.get(g).gate().name();
            Receipt.GateOutcome recorded = c.gates().get(name);
            if ((e.gates() & (1L << g)) == 0) {
                require(
                        key,
                        recorded == null,
                        what + " has an outcome for gate " + name + ", which does not select it");
                continue;
            }
            Receipt.GateOutcome recomputed = c.errored()
                    ? Receipt.GateOutcome.ERRORED
                    : EpochReduction.gateOutcome(
                            c.evaluatorResults(), gates.get(g).gate().requiredEvaluators());
            require(
                    key,
                    recomputed == recorded,
                    what + " records gate " + name + " " + (recorded == null ? "missing" : recorded.wire)
                            + ", its evaluator results give " + recomputed.wire);
        }
        require(
                key,
                c.gates().size() == Long.bitCount(e.gates()),
                what + " has outcomes for gates that do not select it");
        checkOutput(key, what, c);
        checkKeptFiles(what, c);
        checkTranscripts(r, c, e, what, epoch, generation);
        for (Receipt.ModelUsage m : c.usage().map(Receipt.Usage::models).orElse(List.of())) {
            require(
                    key,
                    m.costUsd().equals(m.priced(pricing)),
                    what + " records a cost of "
                            + m.costUsd().map(Pricing::text).orElse("(unknown)") + " for "
                            + m.role().wire + " model " + m.model() + ", the run's pricing gives "
                            + m.priced(pricing).map(Pricing::text).orElse("(unknown: no price)"));
        }
    }

    private void checkOutput(String key, String what, Receipt.CaseResult c) {
        if (c.output().isPresent()) {
            byte[] b = c.output().get().getBytes(StandardCharsets.UTF_8);
            require(
                    key,
                    b.length == c.outputLength()
                            && c.outputSha256().map(Sha256.of(b)::equals).orElse(false),
                    what + ": its inline output's length or SHA-256 differs from the receipt's record of it");
        } else if (c.outputRef().isPresent()) {
            ObjectRef ref = c.outputRef().get();
            byte[] b = ChunkRows.read(store, ref, "output " + ref.key() + " of " + what);
            outputs++;
            require(
                    ref.key().value(),
                    b.length == c.outputLength()
                            && c.outputSha256().map(Sha256.of(b)::equals).orElse(false),
                    "output " + ref.key() + " of " + what + " differs from the length and SHA-256 the receipt records");
        }
    }

    /** Every kept file is where its content's hash says and is the bytes its reference records. */
    private void checkKeptFiles(String what, Receipt.CaseResult c) {
        for (Receipt.KeptFileRef k : c.keptFiles()) {
            ObjectRef ref = k.ref();
            require(
                    ref.key().value(),
                    ref.key().equals(Receipt.keptFileKey(runId, ref.sha256())),
                    what + ": kept file " + k.path() + " is referenced at " + ref.key() + ", not at the key of its"
                            + " SHA-256 " + Receipt.keptFileKey(runId, ref.sha256()));
            // The read compares the bytes with the reference's length and SHA-256: altered or lost is damage.
            ChunkRows.read(store, ref, "kept file " + k.path() + " (" + ref.key() + ") of " + what);
        }
    }

    /**
     * The transcripts of one execution: one per attempt, each a slice of a transcript container of the chunk under
     * {@code generation} (receipt version 8) or an object under the key of its attempt and of {@code generation}
     * (versions 2-7), where {@code generation} is the lease generation that executed it (the receipt's, or a carried
     * entry's); read through its reference (a slice by a ranged read), an accepted session log of that writer epoch
     * whose {@code vigilo/case} event names this case (chunk file entry {@code e}), epoch, attempt and generation: a
     * transcript moved to another case's reference, with the reference's length and SHA-256 made to match, is
     * caught only by what it names itself.
     */
    private void checkTranscripts(
            Receipt r, Receipt.CaseResult c, ChunkFile.Entry e, String what, int epoch, long generation) {
        if (c.transcripts().isEmpty()) {
            casesWithoutTranscripts++; // a version 1 receipt: written before transcripts were recorded
            return;
        }
        require(
                null,
                c.transcripts().size() == c.attempts(),
                what + " made " + c.attempts() + " attempts but references "
                        + c.transcripts().size() + " transcripts");
        for (int a = 0; a < c.transcripts().size(); a++) {
            Receipt.TranscriptRef t = c.transcripts().get(a);
            String name;
            if (t.offset().isPresent()) {
                // A slice of a transcript container (receipt version 8): the container must be one of this chunk's
                // under the generation that executed the case; the slice names the case in its header.
                name = "transcript " + t.ref().key() + " at offset "
                        + t.offset().getAsLong() + " (attempt " + t.attempt() + ")";
                require(
                        t.ref().key().value(),
                        t.attempt() == a + 1
                                && TranscriptStore.isContainerKey(t.ref().key(), runId, r.chunkIndex(), generation),
                        what + ": " + name + " is listed as attempt " + t.attempt() + " of attempt " + (a + 1)
                                + ", or is not a transcript container of chunk " + r.chunkIndex()
                                + " under lease generation " + generation);
            } else {
                name = "transcript " + t.ref().key();
                String expectedKey = TranscriptStore.key(runId, r.chunkIndex(), c.ordinal(), epoch, a + 1, generation)
                        .value();
                require(
                        t.ref().key().value(),
                        t.attempt() == a + 1 && t.ref().key().value().equals(expectedKey),
                        what + ": transcript " + t.ref().key() + " is listed as attempt " + t.attempt()
                                + ", the key of attempt " + (a + 1) + " under lease generation " + generation
                                + " is " + expectedKey);
            }
            byte[] bytes = ChunkRows.readTranscript(store, t, name + " of " + what);
            transcripts++;
            TranscriptIdentity read = sessionLog(bytes);
            VerifyReport v = read.report();
            require(
                    t.ref().key().value(),
                    v.accepted() && v.maxEpoch() != null && v.maxEpoch() == generation,
                    name + " of " + what + " is "
                            + (v.accepted()
                                    ? "written under writer epoch " + v.maxEpoch() + ", not lease generation "
                                            + generation
                                    : "not a readable session log: " + v.error()));
            Optional<String> other = read.mismatch(
                    runId, r.chunkIndex(), e.ordinal(), e.id(), e.sha256().toHex(), epoch, a + 1, generation);
            if (other.isPresent()) {
                throw new VerificationFailure(
                        t.ref().key().value(),
                        name + " of " + what + " " + other.get() + "; the transcript was moved or altered");
            }
        }
    }

    private TranscriptIdentity sessionLog(byte[] bytes) {
        Path file = scratch.resolve("transcript.jsonl.zstd");
        try {
            Files.write(file, bytes);
            return TranscriptIdentity.read(file);
        } catch (IOException e) {
            throw new UnavailableException("cannot stage a transcript in " + scratch + ": " + e.getMessage(), e);
        }
    }

    private static void require(String key, boolean ok, String what) {
        if (!ok) {
            throw new VerificationFailure(key, what);
        }
    }
}
