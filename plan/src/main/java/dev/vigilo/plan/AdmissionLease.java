package dev.vigilo.plan;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * A run's five-minute creation lease taken for admission of an already published plan (docs/execution.md). Like the
 * preparation's claim, it increments the plan generation; every later mutation locks the run row and rechecks owner,
 * generation, status {@code creating} and expiry before changing anything, so a delayed holder writes nothing once
 * another claim, a cancellation or an expiry intervened.
 *
 * <p>Not thread-safe: one admitting thread owns an instance. Only short SQL transactions; never storage I/O inside.
 */
public final class AdmissionLease {
    /** The lease's length, as for preparation. */
    public static final Duration DURATION = Duration.ofMinutes(5);

    /**
     * What the claim read of the run: everything admission needs besides the plan files.
     *
     * @param root             the published manifest's reference
     * @param storageBinding   the physical store the plan and dataset live in
     * @param initialPlacement the frozen placement rule, {@code round-robin:128:alias,...}
     * @param expectedChunks   the plan's chunk count
     * @param admissionCursor  contiguous chunks already admitted and acknowledged
     * @param admissionFolds   the acknowledged per-shard admission folds (opaque JSON), if any
     */
    public record AdmissionClaim(
            ObjectRef root,
            String storageBinding,
            String initialPlacement,
            long expectedChunks,
            long admissionCursor,
            Optional<String> admissionFolds) {}

    private final Jdbi jdbi;
    private final LeaseAuthority lease;

    private AdmissionLease(Jdbi jdbi, LeaseAuthority lease) {
        this.jdbi = jdbi;
        this.lease = lease;
    }

    /** The outcome of {@link #claimForAdmission}. */
    public sealed interface Claim {}

    /** The lease is held; admit. */
    public record Claimed(AdmissionLease lease, AdmissionClaim run) implements Claim {}

    /** Nothing to admit: the run already left {@code creating} (admitted, settled, cancelled or failed). */
    public record NotCreating(String status) implements Claim {}

    /**
     * Claims the run for admission. The run must be {@code creating} with a ready plan and execution requested.
     *
     * <p>A live lease whose recorded holder is a process of this host that no longer runs is taken over at once
     * ({@link LeaseHolder}); this process is recorded as the new holder.
     *
     * @throws NotFoundException when no run has this id
     * @throws ConflictException when another process holds a live lease (preparation or admission), or when the plan
     *     is not ready or execution was not requested (nothing to admit yet)
     */
    public static Claim claimForAdmission(Jdbi jdbi, UUID runId) {
        return claimForAdmission(jdbi, runId, DURATION);
    }

    /** As {@link #claimForAdmission(Jdbi, UUID)} with a lease of {@code duration} (tests use seconds). */
    public static Claim claimForAdmission(Jdbi jdbi, UUID runId, Duration duration) {
        Objects.requireNonNull(jdbi, "jdbi");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(duration, "duration");
        LeaseAuthority authority = new LeaseAuthority(jdbi, runId, LeaseAuthority.Role.ADMITTER, duration);
        CrashPoints.boundary("plan.admission-lease");
        return jdbi.inTransaction(h -> {
            Optional<Map<String, Object>> row = h.createQuery("SELECT r.status, " + CreationLease.COLUMNS + ", "
                            + LeaseHolder.COLUMNS
                            + ", p.plan_status, p.execution_requested, p.plan_generation, p.root_key, p.root_length,"
                            + " p.root_sha256, p.storage_binding, p.initial_placement, p.expected_chunks,"
                            + " p.admission_cursor, p.admission_folds"
                            + " FROM runs r JOIN run_plans p USING (run_id) WHERE r.run_id = :r FOR UPDATE OF r")
                    .bind("r", runId)
                    .mapToMap()
                    .findOne();
            if (row.isEmpty()) {
                throw PlanErrors.notFound(runId);
            }
            Map<String, Object> m = row.get();
            String status = (String) m.get("status");
            if (RunState.fromSpelling(status) != RunState.CREATING) {
                return new NotCreating(status);
            }
            if (!PlanStatus.READY.spelling().equals(m.get("plan_status"))
                    || !Boolean.TRUE.equals(m.get("execution_requested"))) {
                throw PlanErrors.conflict(
                        runId,
                        "the plan is " + m.get("plan_status")
                                + (Boolean.TRUE.equals(m.get("execution_requested"))
                                        ? ""
                                        : " and execution was not requested")
                                + "; repeat vigilo run create without --prepare-only to request it");
            }
            authority.takeOver(h, m, ((Number) m.get("plan_generation")).longValue());
            AdmissionLease lease = new AdmissionLease(jdbi, authority);
            ObjectRef root = new ObjectRef(
                    ObjectKey.of((String) m.get("root_key")),
                    ((Number) m.get("root_length")).longValue(),
                    Sha256.parseHex((String) m.get("root_sha256")));
            return new Claimed(
                    lease,
                    new AdmissionClaim(
                            root,
                            (String) m.get("storage_binding"),
                            (String) m.get("initial_placement"),
                            ((Number) m.get("expected_chunks")).longValue(),
                            ((Number) m.get("admission_cursor")).longValue(),
                            Optional.ofNullable((String) m.get("admission_folds"))));
        });
    }

    public UUID runId() {
        return lease.runId();
    }

    public PlanGeneration generation() {
        return lease.generation();
    }

    /**
     * Locks the run row and rechecks this holder's authority, extending the lease: call first in every control
     * transaction that mutates the run on the lease's behalf. Checks, in this order, that the run is
     * {@code creating}, that this claim holds it (owner and plan generation) and that the lease has not expired.
     *
     * @throws FencedException when the lease expired or was taken over, or the run left {@code creating} (cancelled,
     *     failed, admitted by another holder)
     */
    public void recheck(Handle h) {
        lease.recheck(h);
    }

    /** Renews the lease (one short transaction) if {@code interval} passed since the last recheck. */
    public void renewIfDue(Duration interval) {
        lease.renewIfDue(interval);
    }

    /**
     * Records admission's progress ({@code run_plans.admission_cursor} and {@code admission_folds}): moves the cursor
     * from {@code from} to {@code to} with the acknowledged folds {@code foldsJson}. Call inside a transaction that
     * already ran {@link #recheck}; checks that the cursor is still at {@code from}.
     *
     * @return whether it applied; false when the cursor moved under this admission (then nothing changed)
     */
    public boolean advanceAdmission(Handle h, long from, long to, String foldsJson) {
        return h.createUpdate("UPDATE run_plans SET admission_cursor = :to, admission_folds = :f"
                                + " WHERE run_id = :r AND admission_cursor = :from")
                        .bind("to", to)
                        .bind("f", foldsJson)
                        .bind("r", lease.runId())
                        .bind("from", from)
                        .execute()
                == 1;
    }

    /** The acknowledged admission folds (opaque JSON) as recorded now, if any. Read-only: no authority check. */
    public Optional<String> admissionFolds() {
        return Optional.ofNullable(
                jdbi.withHandle(h -> h.createQuery("SELECT admission_folds FROM run_plans WHERE run_id = :r")
                        .bind("r", lease.runId())
                        .mapTo(String.class)
                        .one()));
    }

    /**
     * Ends the run's creation in the same transaction as the caller's last mutation: clears the lease so nobody holds
     * creation authority any more. Call inside a transaction that already ran {@link #recheck}.
     */
    public void clear(Handle h) {
        lease.clear(h);
    }

    /** Yields the lease if this holder still has it; best effort (it expires anyway). */
    public void release() {
        lease.release();
    }
}
