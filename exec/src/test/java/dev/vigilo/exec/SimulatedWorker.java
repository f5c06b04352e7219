package dev.vigilo.exec;

import dev.vigilo.exec.record.ChunkSeed;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.ReceiptParser;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.record.RunSnapshot;
import dev.vigilo.exec.record.RunSnapshotParser;
import dev.vigilo.plan.ChunkFile;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.Sha256;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Stands in for the worker in tests: claims chunks through {@link ChunkTables} from the routes the control database
 * publishes, reads and verifies each chunk file, makes up deterministic agent and evaluator results per case (some
 * agent errors, evaluator errors and failures, one output long enough to be stored apart), writes a real receipt to
 * the store and completes the chunk under its lease.
 */
public final class SimulatedWorker {
    /** The fixture profile's evaluators, in profile order. */
    static final List<String> EVALUATORS = List.of("exact", "re");

    /** A held lease and where it was claimed. */
    public record Held(String placement, ChunkTables.Lease lease) {}

    private final Placements placements;
    private final ObjectStore store;
    private final UUID runId;
    private final int salt;
    final UUID owner = UUID.randomUUID();

    public SimulatedWorker(Placements placements, ObjectStore store, UUID runId) {
        this(placements, store, runId, 0);
    }

    /** @param salt varies the made-up results: runs with different salts disagree on some cases */
    public SimulatedWorker(Placements placements, ObjectStore store, UUID runId, int salt) {
        this.placements = placements;
        this.store = store;
        this.runId = runId;
        this.salt = salt;
    }

    /** Claims the next claimable chunk of the run in {@code alias}, by the routes active there now. */
    public Optional<Held> claim(String alias) {
        return claim(alias, -1, Duration.ofSeconds(60));
    }

    /** Claims a chunk of {@code shard} (any shard when negative) in {@code alias} for {@code lease}. */
    public Optional<Held> claim(String alias, int shard, Duration lease) {
        List<ChunkTables.Claimable> routes = placements
                .control()
                .withHandle(h -> RunRecords.routes(h, runId, "").stream()
                        .filter(r -> r.active() && r.placement().equals(alias) && (shard < 0 || r.shard() == shard))
                        .map(r -> new ChunkTables.Claimable(
                                runId, r.shard(), r.dispatchCursor().orElse(0L)))
                        .toList());
        return LocalTransactions.inTransaction(
                        placements.jdbi(alias), "claim", h -> ChunkTables.claim(h, routes, owner, lease))
                .map(l -> new Held(alias, l));
    }

    /** Claims from any placement, in alias order. */
    Optional<Held> claimAny() {
        for (String alias : placements.aliases()) {
            Optional<Held> h = claim(alias);
            if (h.isPresent()) {
                return h;
            }
        }
        return Optional.empty();
    }

    /** Executes the held chunk (made-up results) into a receipt; writes long outputs to the store. */
    public Receipt execute(ChunkTables.Lease l) {
        ChunkSeed s = l.seed();
        ChunkFile chunk = PublishedPlan.readChunk(
                runId,
                new PublishedPlan.ChunkRef(s.chunkIndex(), s.file(), s.firstOrdinal(), s.caseCount()),
                store,
                Deadline.after(Duration.ofSeconds(30)));
        RunSnapshot snap = snapshot(l);
        List<Receipt.CaseResult> cases = new ArrayList<>();
        for (ChunkFile.Entry e : chunk.cases()) {
            cases.add(caseResult(e, snap));
        }
        Instant now = Instant.now();
        return new Receipt(
                runId,
                s.chunkIndex(),
                s.chunkId(),
                s.shard(),
                l.generation(),
                owner,
                s.membership(),
                now,
                now,
                EVALUATORS,
                snap.gates().stream().map(RunSnapshot.Gate::name).toList(),
                cases);
    }

    private RunSnapshot snapshot(ChunkTables.Lease l) {
        String alias = placements
                .control()
                .withHandle(h -> RunRecords.routes(h, runId, "").stream()
                        .filter(r -> r.shard() == l.seed().shard())
                        .findFirst()
                        .orElseThrow()
                        .placement());
        return RunSnapshotParser.fromJson(placements
                .jdbi(alias)
                .withHandle(h -> h.createQuery("SELECT snapshot FROM exec_runs WHERE run_id = :r")
                        .bind("r", runId)
                        .mapTo(String.class)
                        .one()));
    }

    private Receipt.CaseResult caseResult(ChunkFile.Entry e, RunSnapshot snap) {
        int h = Math.floorMod(e.id().hashCode() * 31 + 7 + salt * 7_919, 1_000_003);
        boolean agentError = h % 17 == 0;
        Optional<Receipt.Error> error =
                agentError ? Optional.of(new Receipt.Error("timeout", "no answer within 30 s")) : Optional.empty();
        String output = agentError ? null : "answer to " + e.id();
        if ("case-42".equals(e.id())) {
            output = "x".repeat(Receipt.INLINE_OUTPUT_BYTES + 10);
        }
        Optional<String> inline = Optional.empty();
        Optional<ObjectRef> ref = Optional.empty();
        Optional<Sha256> sha = Optional.empty();
        long length = 0;
        if (output != null) {
            byte[] bytes = output.getBytes(StandardCharsets.UTF_8);
            sha = Optional.of(Sha256.of(bytes));
            length = bytes.length;
            if (bytes.length > Receipt.INLINE_OUTPUT_BYTES) {
                ref = Optional.of(store.create(
                        Receipt.outputKey(runId, sha.get()), bytes, Deadline.after(Duration.ofSeconds(30))));
            } else {
                inline = Optional.of(output);
            }
        }
        List<Receipt.EvaluatorResult> evals = new ArrayList<>();
        Map<String, Receipt.EvaluatorResult> byName = new LinkedHashMap<>();
        if (!agentError) {
            for (int i = 0; i < EVALUATORS.size(); i++) {
                if ((e.evaluators() & (1L << i)) == 0) {
                    continue;
                }
                boolean evalError = i == 1 && h % 23 == 0;
                boolean passed = !evalError && h % (5 + 2 * i) != 0;
                Receipt.EvaluatorResult r = new Receipt.EvaluatorResult(
                        EVALUATORS.get(i),
                        passed,
                        passed ? 1.0 : 0.0,
                        evalError
                                ? Optional.of(new Receipt.Error("evaluator_error", "pattern did not compile"))
                                : Optional.empty(),
                        1);
                evals.add(r);
                byName.put(r.name(), r);
            }
        }
        Map<String, Receipt.GateOutcome> gates = new LinkedHashMap<>();
        for (int g = 0; g < snap.gates().size(); g++) {
            if ((e.gates() & (1L << g)) == 0) {
                continue;
            }
            RunSnapshot.Gate gate = snap.gates().get(g);
            Receipt.GateOutcome o;
            if (agentError
                    || gate.requiredEvaluators().stream()
                            .anyMatch(n -> byName.get(n).error().isPresent())) {
                o = Receipt.GateOutcome.ERRORED;
            } else if (gate.requiredEvaluators().stream()
                    .allMatch(n -> byName.get(n).passed())) {
                o = Receipt.GateOutcome.PASSED;
            } else {
                o = Receipt.GateOutcome.FAILED;
            }
            gates.put(gate.name(), o);
        }
        return new Receipt.CaseResult(
                e.ordinal(),
                e.id(),
                e.sha256(),
                agentError,
                inline,
                ref,
                length,
                sha,
                agentError ? 3 : 1,
                5,
                error,
                evals,
                gates,
                List.of(),
                List.of(),
                Optional.of(Receipt.Usage.NONE)); // as a command agent's: no model calls
    }

    /** Writes the receipt (create-only) and completes the chunk under the lease, as the worker does. */
    public ChunkTables.Completion complete(Held held, Receipt r) {
        ObjectRef ref = store.create(
                Receipt.key(runId, r.chunkIndex(), r.leaseGeneration()),
                ReceiptParser.toJson(r),
                Deadline.after(Duration.ofSeconds(30)));
        ChunkTables.Tallies tallies = ChunkTables.Tallies.of(r);
        return LocalTransactions.inTransaction(
                placements.jdbi(held.placement()),
                "completion",
                h -> ChunkTables.complete(h, held.lease(), ref, tallies));
    }

    /** Claims, executes and completes one chunk; empty when nothing is claimable. */
    Optional<ChunkTables.Completion> runOne() {
        return claimAny().map(held -> complete(held, execute(held.lease())));
    }

    /** Runs chunks until nothing is claimable or {@code limit} chunks completed; returns how many. */
    public int run(int limit) {
        int n = 0;
        while (n < limit) {
            Optional<ChunkTables.Completion> c = runOne();
            if (c.isEmpty()) {
                break;
            }
            if (c.get() != ChunkTables.Completion.COMPLETED) {
                throw new AssertionError("a fresh lease's completion was " + c.get());
            }
            n++;
        }
        return n;
    }

    /** Ends the held chunk failed, as the worker does for a damaged chunk file. */
    boolean fail(Held held, String error) {
        return LocalTransactions.inTransaction(
                placements.jdbi(held.placement()), "fail", h -> ChunkTables.fail(h, held.lease(), error));
    }
}
