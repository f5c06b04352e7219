package dev.vigilo.plan;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.FencedException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * One holder's authority over a run's creation lease ({@code runs.creation_*}) and the plan generation of its claim:
 * the one place that takes, rechecks (renewing), clears and releases the lease, for a creator (run preparation's
 * {@link Authority}) and an admitter ({@link AdmissionLease}) alike. Taking the lease increments the plan generation;
 * every later mutation on the lease's behalf runs {@link #recheck} first in its own transaction, which locks the run
 * row and refuses (fences) a holder whose lease expired or was taken over, or whose run left creating, so a delayed
 * holder writes nothing once another claim, a cancellation or an expiry intervened. Expiry is judged by the
 * database's clock.
 *
 * <p>One holder thread owns an instance; the renewal time is volatile because a creator's group writer renews from
 * its coordinator thread too. Only short SQL transactions; never storage I/O inside.
 */
final class LeaseAuthority {
    /** Who holds the lease, as refusals and fencing messages name it. */
    enum Role {
        /** Run preparation ({@code vigilo run create}). */
        CREATOR("creator", "this creator stopped", "before this creator renewed it"),
        /** Admission of a published plan (a worker or {@code vigilo run create}). */
        ADMITTER("process", "this one stopped", "before it was renewed");

        private final String noun;
        private final String stopped;
        private final String expired;

        Role(String noun, String stopped, String expired) {
            this.noun = noun;
            this.stopped = stopped;
            this.expired = expired;
        }
    }

    private final Jdbi jdbi;
    private final UUID runId;
    private final Role role;
    private final Duration duration;
    private final UUID owner = UUID.randomUUID();
    private final LeaseHolder holder = LeaseHolder.current();
    private volatile PlanGeneration generation;
    private volatile long lastRenewNanos;

    LeaseAuthority(Jdbi jdbi, UUID runId, Role role, Duration duration) {
        this.jdbi = Objects.requireNonNull(jdbi, "jdbi");
        this.runId = Objects.requireNonNull(runId, "runId");
        this.role = Objects.requireNonNull(role, "role");
        this.duration = Objects.requireNonNull(duration, "duration");
    }

    UUID runId() {
        return runId;
    }

    /** The plan generation of this holder's claim; null before it took the lease. */
    PlanGeneration generation() {
        return generation;
    }

    /**
     * Takes the lease of a run this transaction just created ({@link RunLifecycle#create}), whose plan record the
     * caller inserts at generation 1.
     */
    void takeNew(Handle h) {
        assign(h);
        generation = new PlanGeneration(1);
        lastRenewNanos = System.nanoTime();
    }

    /**
     * Takes the lease over, in the caller's transaction that locked the run row {@code FOR UPDATE} and read it with
     * {@link CreationLease#COLUMNS} and {@link LeaseHolder#COLUMNS}: over an expired or released lease, or the live
     * lease of a holder of this host that no longer runs ({@link LeaseHolder}); records this process as the holder
     * and increments the plan generation from {@code recordedGeneration}.
     *
     * @throws ConflictException when another holder has a live lease (the refusal says who, and until when)
     */
    void takeOver(Handle h, Map<String, Object> run, long recordedGeneration) {
        Optional<CreationLease> held = CreationLease.held(run);
        if (held.isPresent()) {
            // A holder of this host that no longer runs (kill -9, a crash) is not waited for: its lease is taken
            // over now, and the generation below fences it should it run after all.
            Optional<LeaseHolder> recorded = LeaseHolder.recorded(run);
            if (recorded.map(LeaseHolder::state).orElse(null) != LeaseHolder.State.DEAD_HERE) {
                throw PlanErrors.conflict(runId, held.get().refusal(role.noun, recorded));
            }
        }
        long gen = recordedGeneration + 1;
        assign(h);
        h.createUpdate("UPDATE run_plans SET plan_generation = :g WHERE run_id = :r")
                .bind("g", gen)
                .bind("r", runId)
                .execute();
        generation = new PlanGeneration(gen);
        lastRenewNanos = System.nanoTime();
    }

    private void assign(Handle h) {
        holder.bind(h.createUpdate("UPDATE runs SET creation_owner = :o, creation_lease_expires_at ="
                        + " clock_timestamp() + make_interval(secs => :s), " + LeaseHolder.ASSIGNMENTS
                        + ", updated_at = now() WHERE run_id = :r"))
                .bind("o", owner)
                .bind("s", seconds())
                .bind("r", runId)
                .execute();
    }

    /**
     * Locks the run row and rechecks this holder's authority, extending the lease: call first in every control
     * transaction that mutates the run on the lease's behalf. Checks, in this order, that the run exists, is
     * creating, is held by this claim (owner and plan generation) and that the lease has not expired.
     *
     * @throws FencedException when the run left creating (cancelled, failed, admitted), another claim took the lease
     *     over, or the lease expired
     */
    void recheck(Handle h) {
        Optional<Map<String, Object>> row = h.createQuery("SELECT r.status, r.creation_owner,"
                        + " r.creation_lease_expires_at > clock_timestamp() AS live, p.plan_generation"
                        + " FROM runs r JOIN run_plans p USING (run_id) WHERE r.run_id = :r FOR UPDATE OF r")
                .bind("r", runId)
                .mapToMap()
                .findOne();
        if (row.isEmpty()) {
            throw PlanErrors.fenced(runId, "the run disappeared");
        }
        Map<String, Object> m = row.get();
        RunState status = RunState.fromSpelling((String) m.get("status"));
        if (status != RunState.CREATING) {
            throw PlanErrors.fenced(runId, "the run is " + status + ", no longer " + RunState.CREATING);
        }
        if (!owner.equals(m.get("creation_owner"))
                || ((Number) m.get("plan_generation")).longValue() != generation.value()) {
            throw PlanErrors.fenced(
                    runId,
                    "another " + role.noun + " claimed the run (plan generation " + m.get("plan_generation") + ", ours "
                            + generation.value() + "); " + role.stopped);
        }
        if (!Boolean.TRUE.equals(m.get("live"))) {
            throw PlanErrors.fenced(
                    runId, "the creation lease expired " + role.expired + "; repeat the command to resume");
        }
        h.createUpdate("UPDATE runs SET creation_lease_expires_at = clock_timestamp() + make_interval(secs => :s)"
                        + " WHERE run_id = :r")
                .bind("s", seconds())
                .bind("r", runId)
                .execute();
        lastRenewNanos = System.nanoTime();
    }

    /** Renews the lease (one short transaction) if {@code interval} passed since the last recheck. */
    void renewIfDue(Duration interval) {
        if (System.nanoTime() - lastRenewNanos >= interval.toNanos()) {
            jdbi.useTransaction(this::recheck);
        }
    }

    /**
     * Ends the run's creation in the same transaction as the caller's last mutation: clears the lease so nobody holds
     * creation authority any more. Call inside a transaction that already ran {@link #recheck}.
     */
    void clear(Handle h) {
        h.createUpdate("UPDATE runs SET creation_owner = NULL, creation_lease_expires_at = NULL, " + LeaseHolder.CLEARED
                        + " WHERE run_id = :r")
                .bind("r", runId)
                .execute();
    }

    /** Yields the lease if this holder still has it; best effort (it expires anyway). */
    void release() {
        jdbi.useHandle(h -> h.createUpdate("UPDATE runs SET creation_owner = NULL, creation_lease_expires_at = NULL, "
                        + LeaseHolder.CLEARED + " WHERE run_id = :r AND creation_owner = :o")
                .bind("r", runId)
                .bind("o", owner)
                .execute());
    }

    private double seconds() {
        return duration.toMillis() / 1000.0;
    }
}
