package dev.vigilo.plan;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * One creator's authority over one run's preparation: its claim of the run (the creation lease, {@link
 * LeaseAuthority}, and the frozen inputs, {@link FrozenInputs}), its plan files ({@link PlanFiles}), its publication
 * ({@link PlanPublication}) and the plan-status changes short of publication (execution requested, rejected). Every
 * mutation runs in its own short transaction that rechecks the lease first; no transaction spans storage I/O. Not
 * thread-safe: one creator thread owns an instance.
 */
final class Authority {
    /** What the claim found. */
    record Claimed(
            PlanStatus planStatus,
            ChunkCursor cursor,
            Optional<ObjectRef> root,
            boolean executionRequested,
            Optional<String> rejection,
            RunState runStatus) {}

    private final Jdbi jdbi;
    private final LeaseAuthority lease;
    private final PlanFiles files;
    private final PlanPublication publication;

    Authority(Jdbi jdbi, UUID runId, Duration lease) {
        this.jdbi = Objects.requireNonNull(jdbi, "jdbi");
        this.lease = new LeaseAuthority(jdbi, runId, LeaseAuthority.Role.CREATOR, lease);
        this.files = new PlanFiles(jdbi, this.lease);
        this.publication = new PlanPublication(jdbi, this.lease);
    }

    UUID runId() {
        return lease.runId();
    }

    PlanGeneration generation() {
        return lease.generation();
    }

    /** The creator's plan files: registrations, acknowledgements, the chunk cursor. */
    PlanFiles files() {
        return files;
    }

    /**
     * Claims the run: creates it (status creating, plan_status preparing) or takes over an expired or released lease,
     * or the live lease of a holder of this host that no longer runs ({@link LeaseHolder}), incrementing the plan
     * generation and recording this process as the holder. Rejects a live lease of another creator, a cancelled run
     * and any frozen input that differs.
     */
    Claimed claim(FrozenInputs f) {
        CrashPoints.boundary("plan.claim");
        UUID runId = lease.runId();
        return jdbi.inTransaction(h -> {
            // Insert-or-lock: a concurrent first claim blocks on the insert until the other commits, then sees its row.
            if (RunLifecycle.create(h, runId)) {
                lease.takeNew(h);
                f.insert(h, runId);
                return new Claimed(
                        PlanStatus.PREPARING,
                        new ChunkCursor(0),
                        Optional.empty(),
                        false,
                        Optional.empty(),
                        RunState.CREATING);
            }
            Map<String, Object> run = h.createQuery("SELECT status, " + CreationLease.COLUMNS + ", "
                            + LeaseHolder.COLUMNS + " FROM runs WHERE run_id = :r FOR UPDATE")
                    .bind("r", runId)
                    .mapToMap()
                    .one();
            Map<String, Object> p = h.createQuery("SELECT * FROM run_plans WHERE run_id = :r")
                    .bind("r", runId)
                    .mapToMap()
                    .one();
            f.requireSameAs(runId, p);
            RunState status = RunState.fromSpelling((String) run.get("status"));
            if (status == RunState.CANCELLED) {
                throw PlanErrors.fenced(runId, "the run was cancelled; create a new run");
            }
            lease.takeOver(h, run, ((Number) p.get("plan_generation")).longValue());
            Optional<ObjectRef> root = p.get("root_key") == null
                    ? Optional.empty()
                    : Optional.of(new ObjectRef(
                            ObjectKey.of((String) p.get("root_key")),
                            ((Number) p.get("root_length")).longValue(),
                            Sha256.parseHex((String) p.get("root_sha256"))));
            return new Claimed(
                    PlanStatus.fromSpelling((String) p.get("plan_status")),
                    new ChunkCursor(((Number) p.get("plan_chunk_cursor")).longValue()),
                    root,
                    Boolean.TRUE.equals(p.get("execution_requested")),
                    Optional.ofNullable((String) p.get("rejection")),
                    status);
        });
    }

    /** Renews the lease if {@code interval} has passed since the last recheck; at most one SQL write per interval. */
    void renewIfDue(Duration interval) {
        lease.renewIfDue(interval);
    }

    /** Publishes the plan: {@link PlanPublication#commit}, whose javadoc is the contract. */
    void publish(ObjectRef root, long expectedChunks, long filesWalked, List<ShardTotals> shards, boolean execute) {
        publication.commit(root, expectedChunks, filesWalked, shards, execute);
    }

    /**
     * Requests execution of an already published plan held by --prepare-only. The run stays creating: admission
     * (module exec) moves it to pending once its execution records are seeded and verified.
     */
    void requestExecution() {
        CrashPoints.boundary("plan.request-execution");
        jdbi.useTransaction(h -> {
            lease.recheck(h);
            h.createUpdate("UPDATE run_plans SET execution_requested = true WHERE run_id = :r")
                    .bind("r", lease.runId())
                    .execute();
        });
    }

    /** Records that the plan can never be prepared with these inputs (e.g. a gate selecting no case). */
    void reject(String reason) {
        CrashPoints.boundary("plan.reject");
        jdbi.useTransaction(h -> {
            lease.recheck(h);
            h.createUpdate("UPDATE run_plans SET plan_status = :rejected, rejection = :x WHERE run_id = :r")
                    .bind("rejected", PlanStatus.REJECTED.spelling())
                    .bind("x", reason)
                    .bind("r", lease.runId())
                    .execute();
        });
    }

    /** Yields ownership if this creator still holds it; best effort (the lease expires anyway). */
    void release() {
        if (lease.generation() == null) {
            return;
        }
        CrashPoints.boundary("plan.release");
        lease.release();
    }
}
