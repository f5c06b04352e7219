package dev.vigilo.exec.admission;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.BudgetTable;
import dev.vigilo.exec.record.ChunkSeed;
import dev.vigilo.exec.record.EpochReduction;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.record.RunSnapshot;
import dev.vigilo.exec.record.SeedTables;
import dev.vigilo.plan.AdmissionLease;
import dev.vigilo.plan.ChunkFile;
import dev.vigilo.plan.GateFile;
import dev.vigilo.plan.PlanManifest;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.plan.RunLifecycle;
import dev.vigilo.plan.RunState;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreBinding;
import dev.vigilo.storage.StoreSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Admits a published plan to execution (docs/execution.md, "Admission"): seeds one scheduling row per chunk into the
 * run's execution databases, verifies those rows independently against the published plan, and activates the run
 * (status {@code pending}, routes and dispatch cursors published) in one fenced control transaction.
 *
 * <p>Contract: {@link #admit} either returns after activation (or after finding the run already past admission), or
 * throws. Availability failures ({@link UnavailableException}, storage timeouts) leave everything committed so far
 * exactly replayable: repeating resumes at the acknowledged cursor. Immutable conflicts (a local row that differs
 * from the plan, a chunk file altered after publication) end the run {@code failed} with the reason, without ever
 * publishing a dispatch cursor. Interrupting the calling thread cancels: open local transactions roll back and the
 * lease is yielded. Thread-safe; each call claims its own lease.
 */
public final class Admission {
    private static final Logger LOG = LoggerFactory.getLogger(Admission.class);
    /** Chunks per admission page (the spec's bounded chunk pages). */
    static final int PAGE = 256;
    /** Blob read allowance, minted before each lease renewal. */
    static final Duration BLOB_DEADLINE = Duration.ofSeconds(120);
    /** Renewal interval of the creation lease while admitting. */
    static final Duration RENEW = Duration.ofSeconds(60);

    /** What {@link #admit} found or did. */
    public enum Outcome {
        /** This call activated the run: it is now pending. */
        ACTIVATED,
        /** The run had already left creating (admitted, running, settled, cancelled or failed); nothing was done. */
        NOT_CREATING
    }

    /**
     * @param runId  the run
     * @param outcome what happened
     * @param status the run's status afterwards
     * @param chunks chunks admitted by the run (0 when nothing was done)
     */
    public record Result(UUID runId, Outcome outcome, String status, long chunks) {}

    private final Placements placements;
    private final StorageConfig storage;
    private final Jdbi control;
    private final Duration lease;
    private final Hooks hooks;

    /** Test seams at admission's durable boundaries; production uses {@link #NONE}. */
    public interface Hooks {
        default void afterLocalCommit(long pageEnd) {}

        default void afterAcknowledgement(long cursor) {}
    }

    static final Hooks NONE = new Hooks() {};

    public Admission(Placements placements, StorageConfig storage) {
        this(placements, storage, AdmissionLease.DURATION, NONE);
    }

    /** As {@link #Admission(Placements, StorageConfig)} with a creation lease of {@code lease} (tests: seconds). */
    public Admission(Placements placements, StorageConfig storage, Duration lease) {
        this(placements, storage, lease, NONE);
    }

    public Admission(Placements placements, StorageConfig storage, Hooks hooks) {
        this(placements, storage, AdmissionLease.DURATION, hooks);
    }

    Admission(Placements placements, StorageConfig storage, Duration lease, Hooks hooks) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.storage = Objects.requireNonNull(storage, "storage");
        this.control = placements.control();
        this.lease = Objects.requireNonNull(lease, "lease");
        this.hooks = hooks;
    }

    /**
     * Admits the run: claims its creation lease, seeds, verifies and activates.
     *
     * @throws NotFoundException    no such run
     * @throws ConflictException    another process holds the lease, or execution was not requested; or an immutable
     *                              seed conflict, after which the run is failed
     * @throws FencedException      this admission lost the lease to another process mid-way; nothing more was done
     * @throws DamagedException     the plan or a seeded row is damaged; the run is now failed
     * @throws UnavailableException a database or the store failed; repeat to resume
     * @throws CancelledException   the thread was interrupted or the run was cancelled
     */
    public Result admit(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        AdmissionLease.Claim claim = AdmissionLease.claimForAdmission(control, runId, lease);
        if (claim instanceof AdmissionLease.NotCreating nc) {
            return new Result(runId, Outcome.NOT_CREATING, nc.status(), 0);
        }
        AdmissionLease.Claimed claimed = (AdmissionLease.Claimed) claim;
        AdmissionLease lease = claimed.lease();
        try {
            return new Run(lease, claimed.run()).admit();
        } catch (FencedException e) {
            // The lease's recheck fences this admission when the run left creating; a cancellation is reported as one.
            if (cancelledNow(runId, e)) {
                throw new CancelledException("run " + runId + " was cancelled during admission; nothing was activated");
            }
            throw e;
        } finally {
            try {
                lease.release();
            } catch (RuntimeException ignored) {
                // Control database unreachable: the lease expires on its own.
            }
        }
    }

    /** Carries an immutable seed conflict out of the transactions it rolls back. */
    /**
     * Whether the run is cancelled, read after its lease fenced this admission (cancelled is terminal, so a run read
     * cancelled now left creating through the cancellation). A failed read leaves the fence to be reported as it is.
     */
    private boolean cancelledNow(UUID runId, FencedException fenced) {
        try {
            return control.withHandle(h -> RunRecords.run(h, runId)).status() == RunState.CANCELLED;
        } catch (RuntimeException e) {
            fenced.addSuppressed(e);
            return false;
        }
    }

    private static final class SeedConflict extends RuntimeException {
        final List<String> conflicts;

        SeedConflict(List<String> conflicts) {
            super(null, null, false, false);
            this.conflicts = conflicts;
        }
    }

    /** One admission attempt of one run; owned by the calling thread. */
    private final class Run {
        private final AdmissionLease lease;
        private final AdmissionLease.AdmissionClaim claim;
        private final UUID runId;

        Run(AdmissionLease lease, AdmissionLease.AdmissionClaim claim) {
            this.lease = lease;
            this.claim = claim;
            this.runId = lease.runId();
        }

        Result admit() {
            StoreSpec spec = storage.resolve(new StoreBinding(claim.storageBinding()))
                    .orElseThrow(() -> new InvalidInputException("run " + runId + ": its plan is stored in "
                            + claim.storageBinding() + ", which the storage configuration (" + storage.source()
                            + ") does not resolve; set VIGILO_STORAGE_CONFIG or --storage-config to a configuration"
                            + " with that store"));
            List<String> aliases = Placements.aliasesOf(claim.initialPlacement());
            for (String alias : aliases) {
                if (!placements.has(alias)) {
                    throw new UnavailableException("run " + runId + " is placed on execution database \"" + alias
                            + "\", which this process's execution configuration ("
                            + placements.config().source()
                            + ") does not list; add it, or admit from a process that has it");
                }
            }
            try (ObjectStore store = ObjectStores.open(spec)) {
                PublishedPlan plan;
                List<GateFile> gates;
                int epochs;
                Optional<BudgetTable.Limits> budget;
                try {
                    plan = PublishedPlan.open(runId, claim.root(), store, Deadline.after(BLOB_DEADLINE));
                    gates = plan.gates(Deadline.after(BLOB_DEADLINE));
                    var configuration = plan.configuration(Deadline.after(BLOB_DEADLINE));
                    epochs = EpochReduction.Policy.of(configuration).count();
                    budget = BudgetTable.Limits.frozen(runId, configuration);
                } catch (DamagedException e) {
                    throw fail(e);
                }
                PlanManifest m = plan.manifest();
                RunSnapshot snapshot = RunSnapshot.of(runId, claim.root(), claim.storageBinding(), m, epochs, gates);
                Map<Integer, SeedTables.ShardSnapshot> shards = shardSnapshots(m, gates);
                seed(plan, store, aliases, snapshot, shards);
                verify(aliases, m);
                activate(aliases, m, budget);
                LOG.info("run {} admitted: {} chunks on {}", runId, m.chunks(), aliases);
                return new Result(runId, Outcome.ACTIVATED, RunState.PENDING.spelling(), m.chunks());
            }
        }

        private String aliasOf(List<String> aliases, int shard) {
            return aliases.get(shard % aliases.size());
        }

        private Map<Integer, SeedTables.ShardSnapshot> shardSnapshots(PlanManifest m, List<GateFile> gates) {
            Map<Integer, SeedTables.ShardSnapshot> out = new TreeMap<>();
            List<Map<Integer, Long>> counts = new ArrayList<>();
            for (GateFile g : gates) {
                Map<Integer, Long> c = new HashMap<>();
                g.shards().forEach(s -> c.put(s.shard(), s.count()));
                counts.add(c);
            }
            for (PlanManifest.Shard s : m.shards()) {
                List<Long> gateCounts = new ArrayList<>();
                for (Map<Integer, Long> c : counts) {
                    Long n = c.get(s.shard());
                    if (n == null) {
                        throw fail(new DamagedException("run " + runId + ": a gate file has no count for used shard "
                                + s.shard() + "; the plan is inconsistent, create a new run"));
                    }
                    gateCounts.add(n);
                }
                out.put(
                        s.shard(),
                        new SeedTables.ShardSnapshot(
                                s.shard(), s.cases(), s.chunks(), s.projection(), s.settlement(), gateCounts));
            }
            return out;
        }

        /** Seeds every page from the acknowledged cursor on. */
        private void seed(
                PublishedPlan plan,
                ObjectStore store,
                List<String> aliases,
                RunSnapshot snapshot,
                Map<Integer, SeedTables.ShardSnapshot> shards) {
            long cursor = claim.admissionCursor();
            AdmissionFolds folds = AdmissionFolds.parse(claim.admissionFolds());
            long expected = claim.expectedChunks();
            while (cursor < expected) {
                checkInterrupt();
                lease.renewIfDue(RENEW);
                List<ChunkSeed> page = readPage(plan, store, cursor);
                AdmissionFolds next = folds.copy();
                page.forEach(next::add);
                Map<String, List<ChunkSeed>> byAlias = new LinkedHashMap<>();
                for (String alias : aliases) {
                    byAlias.put(alias, new ArrayList<>());
                }
                page.forEach(c -> byAlias.get(aliasOf(aliases, c.shard())).add(c));
                for (var group : byAlias.entrySet()) {
                    if (!group.getValue().isEmpty()) {
                        seedGroup(group.getKey(), snapshot, shards, group.getValue());
                    }
                }
                long end = cursor + page.size();
                hooks.afterLocalCommit(end);
                acknowledge(cursor, end, next);
                hooks.afterAcknowledgement(end);
                cursor = end;
                folds = next;
            }
        }

        /** Reads the next page of chunk files through the index, verifying each (so tampering stops admission). */
        private List<ChunkSeed> readPage(PublishedPlan plan, ObjectStore store, long from) {
            List<ChunkSeed> page = new ArrayList<>(PAGE);
            Deadline deadline = Deadline.after(BLOB_DEADLINE);
            try {
                plan.forEachChunk(from, deadline, ref -> {
                    checkInterrupt();
                    ChunkFile c = PublishedPlan.readChunk(runId, ref, store, deadline);
                    page.add(ChunkSeed.of(c, ref.ref()));
                    return page.size() < PAGE;
                });
            } catch (DamagedException e) {
                throw fail(e);
            }
            if (page.isEmpty()) {
                throw fail(new DamagedException("run " + runId + ": the chunk index ends before chunk " + from + " of "
                        + claim.expectedChunks()));
            }
            return page;
        }

        /**
         * One placement's share of a page: under the shard fences (FOR SHARE, ascending), one bounded local
         * transaction inserts and compares the snapshots and chunk rows.
         */
        private void seedGroup(
                String alias,
                RunSnapshot snapshot,
                Map<Integer, SeedTables.ShardSnapshot> shards,
                List<ChunkSeed> chunks) {
            List<Integer> shardIds =
                    chunks.stream().map(ChunkSeed::shard).distinct().sorted().toList();
            List<SeedTables.ShardSnapshot> snaps =
                    shardIds.stream().map(shards::get).toList();
            Jdbi local = placements.jdbi(alias);
            try {
                CrashPoints.boundary("exec.admit.seed");
                control.useTransaction(h -> {
                    lease.recheck(h);
                    lockFences(h, alias, shardIds);
                    Placements.State state = placements.state(alias);
                    LocalTransactions.inTransaction(
                            local, "admission of run " + runId + " into execution database \"" + alias + "\"", lh -> {
                                if (state == Placements.State.DRAINING) {
                                    requireReplay(lh, alias, chunks);
                                }
                                List<String> found = new ArrayList<>(SeedTables.seedSnapshots(lh, snapshot, snaps));
                                found.addAll(SeedTables.seedChunks(lh, runId, chunks));
                                if (!found.isEmpty()) {
                                    // Rolls back both transactions; the run is failed below, outside them.
                                    throw new SeedConflict(found);
                                }
                                return null;
                            });
                });
            } catch (SeedConflict e) {
                List<String> conflicts = e.conflicts;
                throw fail(new ConflictException("run " + runId + ": immutable seed conflict in execution database \""
                        + alias + "\": " + conflicts.get(0)
                        + (conflicts.size() > 1 ? " (and " + (conflicts.size() - 1) + " more)" : "")
                        + "; the execution records differ from the published plan, create a new run"));
            }
        }

        /** Inserts missing route rows, then locks the group's fences FOR SHARE in ascending shard order. */
        private void lockFences(Handle h, String alias, List<Integer> shardIds) {
            h.createUpdate("INSERT INTO exec_shard_routes (run_id, shard, placement, state)"
                            + " SELECT :r, s, :a, 'seeding' FROM unnest(:s::int[]) AS s ORDER BY s"
                            + " ON CONFLICT (run_id, shard) DO NOTHING")
                    .bind("r", runId)
                    .bind("a", alias)
                    .bindArray("s", Integer.class, shardIds)
                    .execute();
            List<Map<String, Object>> rows = h.createQuery("SELECT shard, placement, state FROM exec_shard_routes"
                            + " WHERE run_id = :r AND shard = ANY(:s) ORDER BY shard FOR SHARE")
                    .bind("r", runId)
                    .bindArray("s", Integer.class, shardIds)
                    .mapToMap()
                    .list();
            for (Map<String, Object> row : rows) {
                if ("tombstoned".equals(row.get("state"))) {
                    throw new CancelledException("run " + runId + " was cancelled: shard " + row.get("shard")
                            + " is tombstoned; admission stopped");
                }
                if (!alias.equals(row.get("placement"))) {
                    throw new ConflictException("run " + runId + ": shard " + row.get("shard") + " is routed to \""
                            + row.get("placement") + "\", not \"" + alias + "\"; admission cannot reseed it");
                }
            }
        }

        private void requireReplay(Handle lh, String alias, List<ChunkSeed> chunks) {
            long existing = lh.createQuery(
                            "SELECT count(*) FROM exec_chunks WHERE run_id = :r" + " AND chunk_index = ANY(:i)")
                    .bind("r", runId)
                    .bindArray(
                            "i",
                            Long.class,
                            chunks.stream().map(ChunkSeed::chunkIndex).toList())
                    .mapTo(Long.class)
                    .one();
            if (existing != chunks.size()) {
                throw new UnavailableException("execution database \"" + alias + "\" is draining and takes no new"
                        + " admission; run vigilo placement activate " + alias + " or admit later");
            }
        }

        private void acknowledge(long from, long to, AdmissionFolds folds) {
            CrashPoints.boundary("exec.admit.acknowledge");
            control.useTransaction(h -> {
                lease.recheck(h);
                if (!lease.advanceAdmission(h, from, to, folds.toJson())) {
                    throw new FencedException(
                            "run " + runId + ": the admission cursor moved under this admission; it stopped");
                }
            });
        }

        /** Reads every placement's rows back in ordered pages and compares each shard with the manifest. */
        private void verify(List<String> aliases, PlanManifest m) {
            Map<Integer, PlanManifest.Shard> expected = new TreeMap<>();
            m.shards().forEach(s -> expected.put(s.shard(), s));
            AdmissionFolds acknowledged = ackedFolds();
            Map<Integer, PublishedPlan.SettlementFold> settlement = new TreeMap<>();
            AdmissionFolds chain = new AdmissionFolds();
            for (String alias : aliases) {
                List<Integer> assigned = expected.keySet().stream()
                        .filter(s -> aliasOf(aliases, s).equals(alias))
                        .toList();
                if (assigned.isEmpty()) {
                    continue;
                }
                Jdbi local = placements.jdbi(alias);
                long after = -1;
                while (true) {
                    checkInterrupt();
                    requireActive(alias);
                    long from = after;
                    List<ChunkSeed> page = LocalTransactions.inTransaction(
                            local,
                            "verification of run " + runId + " in execution database \"" + alias + "\"",
                            lh -> SeedTables.verificationPage(lh, runId, assigned, from));
                    if (page.isEmpty()) {
                        break;
                    }
                    for (ChunkSeed c : page) {
                        settlement
                                .computeIfAbsent(c.shard(), s -> new PublishedPlan.SettlementFold())
                                .add(c.chunkIndex(), c.chunkId(), c.caseCount(), c.membership());
                        chain.add(c);
                    }
                    after = page.get(page.size() - 1).chunkIndex();
                }
            }
            List<String> problems = new ArrayList<>();
            for (PlanManifest.Shard s : expected.values()) {
                PublishedPlan.SettlementFold f = settlement.get(s.shard());
                if (f == null) {
                    problems.add("shard " + s.shard() + " has no chunk rows");
                    continue;
                }
                long chunks = f.chunks();
                long cases = f.cases();
                if (chunks != s.chunks() || cases != s.cases() || !f.finish().equals(s.settlement())) {
                    problems.add("shard " + s.shard() + " folds to " + chunks + " chunks / " + cases
                            + " cases with a different settlement hash than the published plan's");
                }
                var ack = acknowledged.shards().get(s.shard());
                var mine = chain.shards().get(s.shard());
                if (ack == null || !Arrays.equals(ack.fold(), mine.fold())) {
                    problems.add("shard " + s.shard() + "'s rows differ from what admission acknowledged");
                }
            }
            if (settlement.size() != expected.size()) {
                problems.add("rows exist for shards the plan does not use");
            }
            if (!problems.isEmpty()) {
                throw fail(new DamagedException("run " + runId + ": verification of the execution records failed: "
                        + problems.get(0) + (problems.size() > 1 ? " (and " + (problems.size() - 1) + " more)" : "")
                        + "; create a new run"));
            }
        }

        private AdmissionFolds ackedFolds() {
            return AdmissionFolds.parse(lease.admissionFolds());
        }

        private void requireActive(String alias) {
            if (placements.state(alias) != Placements.State.ACTIVE) {
                throw new UnavailableException("execution database \"" + alias + "\" is draining; activation needs"
                        + " active placements (vigilo placement activate " + alias + "), then admission resumes");
            }
        }

        /** The one fenced control transaction that publishes routes and dispatch cursors and sets pending. */
        private void activate(List<String> aliases, PlanManifest m, Optional<BudgetTable.Limits> budget) {
            for (String alias : aliases) {
                requireActive(alias);
            }
            CrashPoints.boundary("exec.admit.activate");
            String problem = control.inTransaction(h -> {
                lease.recheck(h);
                List<Map<String, Object>> routes = h.createQuery("SELECT shard, placement, state FROM"
                                + " exec_shard_routes WHERE run_id = :r ORDER BY shard FOR UPDATE")
                        .bind("r", runId)
                        .mapToMap()
                        .list();
                Map<Integer, Long> cursors = new TreeMap<>();
                m.shards().forEach(s -> cursors.put(s.shard(), s.chunks()));
                if (routes.size() != cursors.size()) {
                    return routes.size() + " shard routes for " + cursors.size() + " used shards";
                }
                for (Map<String, Object> r : routes) {
                    int shard = ((Number) r.get("shard")).intValue();
                    if ("tombstoned".equals(r.get("state"))) {
                        throw new CancelledException("run " + runId + " was cancelled; it was not activated");
                    }
                    if (!cursors.containsKey(shard) || !aliasOf(aliases, shard).equals(r.get("placement"))) {
                        return "shard " + shard + "'s route disagrees with the plan";
                    }
                }
                h.createUpdate("UPDATE exec_shard_routes r SET state = 'active', dispatch_cursor = c.n"
                                + " FROM unnest(:s::int[], :n::bigint[]) AS c(s, n)"
                                + " WHERE r.run_id = :r AND r.shard = c.s")
                        .bind("r", runId)
                        .bindArray("s", Integer.class, List.copyOf(cursors.keySet()))
                        .bindArray("n", Long.class, List.copyOf(cursors.values()))
                        .execute();
                if (!RunLifecycle.admit(h, runId)) {
                    throw new FencedException("run " + runId + " left creating under this admission; it stopped");
                }
                // The run's budget, frozen in its profile, in force from its first claim (docs/execution.md, "Budget").
                budget.ifPresent(b -> BudgetTable.create(h, runId, b));
                lease.clear(h);
                return null;
            });
            if (problem != null) {
                // Outside the transaction: fail() locks the run row itself.
                throw fail(new DamagedException("run " + runId + ": " + problem + "; create a new run"));
            }
        }

        /**
         * Ends the run {@code failed} with the reason (no dispatch cursor was published) and returns the exception
         * to throw. If the lease was lost meanwhile, the run is left to its new holder. Never call it inside a control
         * transaction: it locks the run row in its own.
         */
        private RuntimeException fail(RuntimeException reason) {
            try {
                CrashPoints.boundary("exec.admit.fail");
                control.useTransaction(h -> {
                    lease.recheck(h);
                    if (!RunLifecycle.fail(h, runId, reason.getMessage())) {
                        throw new FencedException("run " + runId + " already ended; admission did not fail it");
                    }
                    lease.clear(h);
                });
            } catch (RuntimeException e) {
                reason.addSuppressed(e);
            }
            return reason;
        }

        private void checkInterrupt() {
            if (Thread.currentThread().isInterrupted()) {
                throw new CancelledException("admission of run " + runId + " was cancelled; repeat to resume");
            }
        }
    }
}
