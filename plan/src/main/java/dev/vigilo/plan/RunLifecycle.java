package dev.vigilo.plan;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;

/**
 * The one owner of a run's state machine ({@code runs.status}, with the verdict, failure reason, dispatchability and
 * end time recorded beside it): every change of a run's state is one of the transitions below, and no other class
 * writes {@code runs.status}. Each transition is one SQL statement on the caller's handle, inside the caller's
 * transaction, so it commits or rolls back with the caller's other records; each is guarded by the state it leaves
 * and returns whether it applied (it updated the run's row), never silently nothing.
 *
 * <table>
 *   <caption>Transitions (docs/execution.md, "The run state machine")</caption>
 *   <tr><th>transition</th><th>from</th><th>to</th><th>called by</th><th>the caller checked first</th></tr>
 *   <tr><td>{@link #create}</td><td>(no row)</td><td>creating</td><td>preparation's claim</td><td>nothing: the
 *       insert itself is the check</td></tr>
 *   <tr><td>{@link #admit}</td><td>creating</td><td>pending, dispatchable</td><td>admission's activation</td><td>the
 *       admission lease ({@link AdmissionLease#recheck}: owner, plan generation, expiry, creating)</td></tr>
 *   <tr><td>{@link #markRunning}</td><td>pending</td><td>running</td><td>a worker's first claim</td><td>nothing: a
 *       no-op once running or ended</td></tr>
 *   <tr><td>{@link #settle}</td><td>pending, running</td><td>settled, with a verdict</td><td>settlement</td><td>the
 *       run row locked, its routes unchanged, every shard complete</td></tr>
 *   <tr><td>{@link #fail}</td><td>creating, pending, running, paused</td><td>failed, with a reason</td><td>admission (after
 *       its lease recheck), settlement</td><td>as for admit or settle</td></tr>
 *   <tr><td>{@link #settle}</td><td>paused</td><td>settled</td><td>settlement</td><td>as above: the chunks a
 *       paused run's workers held completed, and they were its last</td></tr>
 *   <tr><td>{@link #pause}</td><td>pending, running</td><td>paused, not dispatchable, with a reason</td><td>{@code
 *       vigilo run pause}</td><td>the run row locked {@code FOR UPDATE}</td></tr>
 *   <tr><td>{@link #interruptPause}</td><td>paused</td><td>paused, interrupting held chunks</td><td>{@code vigilo
 *       run pause --now}, a budget that ran out</td><td>the run row locked {@code FOR UPDATE}</td></tr>
 *   <tr><td>{@link #resume}</td><td>paused</td><td>the state it was paused from, dispatchable</td><td>{@code vigilo
 *       run resume}</td><td>the run row locked {@code FOR UPDATE}</td></tr>
 *   <tr><td>{@link #reopen}</td><td>settled, failed</td><td>pending, dispatchable, verdict and reason
 *       cleared</td><td>{@code vigilo run rerun-errors}</td><td>the run row locked {@code FOR UPDATE}, its outcome kept
 *       in the rerun history, its errored chunks queued again</td></tr>
 *   <tr><td>{@link #cancel}</td><td>creating, pending, running, paused</td><td>cancelled</td><td>{@code vigilo run
 *       cancel}</td><td>the run row locked {@code FOR UPDATE}</td></tr>
 * </table>
 *
 * <p>Settled, failed and cancelled are terminal: no transition leaves them but {@link #reopen}, which only
 * {@code vigilo run rerun-errors} calls (a settled or failed run executes its errored cases again and settles anew;
 * docs/execution.md, "Rerun errors"); a cancelled run is never reopened. Paused is executing but not dispatchable:
 * workers claim none of its chunks, finish those they hold, and settlement may still settle it (then nothing was left
 * to run). {@link #fail} also leaves paused. An inconclusive outcome is a {@link RunVerdict}, recorded next to
 * {@link RunState#SETTLED}, not a state.
 *
 * <p>Reads of {@code runs} elsewhere (the views of module exec) spell states only through {@link #executing}, {@link #runnable}
 * and {@link #awaitingAdmission}, never as literals.
 */
public final class RunLifecycle {
    /**
     * The states in which execution may still change a run (completions, settlement; dispatch and claims also need
     * {@code runs.dispatchable}, which a paused run is not), in declaration order.
     */
    public static final Set<RunState> EXECUTING =
            Collections.unmodifiableSet(EnumSet.of(RunState.PENDING, RunState.RUNNING, RunState.PAUSED));

    /** The states {@link #pause} leaves (and {@link #resume} returns to), in declaration order. */
    public static final Set<RunState> PAUSABLE =
            Collections.unmodifiableSet(EnumSet.of(RunState.PENDING, RunState.RUNNING));

    /** The states no transition leaves, in declaration order. */
    public static final Set<RunState> TERMINAL =
            Collections.unmodifiableSet(EnumSet.of(RunState.SETTLED, RunState.FAILED, RunState.CANCELLED));

    private static final String EXECUTING_LIST = quotedList(EXECUTING);

    private static final String NOT_TERMINAL =
            "status IN (" + quotedList(EnumSet.complementOf(EnumSet.copyOf(TERMINAL))) + ")";

    /** The assignments that clear a pause's fields, for every transition that can leave paused. */
    private static final String NOT_PAUSED =
            " pause_reason = NULL, paused_from = NULL, paused_at = NULL, pause_interrupts = false,";

    private RunLifecycle() {}

    /**
     * (no row) to creating: inserts the run's row in state creating, nothing else (its creation lease is the claim's,
     * taken next in the same transaction). A concurrent first insert of the same run blocks this one until it commits.
     *
     * @return whether the row was inserted; false when the run exists (in any state), which the caller then locks
     *     and reads
     */
    static boolean create(Handle h, UUID runId) {
        return h.createUpdate("INSERT INTO runs (run_id, status) VALUES (:r, :creating)"
                                + " ON CONFLICT (run_id) DO NOTHING")
                        .bind("r", runId)
                        .bind("creating", RunState.CREATING.spelling())
                        .execute()
                == 1;
    }

    /**
     * Creating to pending: the run becomes dispatchable. Call after {@link AdmissionLease#recheck} in the same
     * transaction (it checked the lease, the plan generation and the state); this statement checks the state again.
     *
     * @return whether it applied; false when the run is not creating (then nothing changed)
     */
    public static boolean admit(Handle h, UUID runId) {
        return update(
                h,
                runId,
                "status = " + quoted(RunState.PENDING) + ", dispatchable = true, updated_at = now()",
                "status = " + quoted(RunState.CREATING));
    }

    /**
     * Pending to running, on a worker's first claim of the run's chunks. Checks only the state.
     *
     * @return whether it applied; false when the run is already running, or no longer pending (ended), a no-op
     */
    public static boolean markRunning(Handle h, UUID runId) {
        return update(
                h,
                runId,
                "status = " + quoted(RunState.RUNNING) + ", updated_at = now()",
                "status = " + quoted(RunState.PENDING));
    }

    /**
     * Pending or running to settled with {@code verdict}: no longer dispatchable, ended now. Call with the run row
     * locked in the caller's transaction, after the caller checked that every shard is complete.
     *
     * @return whether it applied; false when the run is not pending or running (then nothing changed)
     */
    public static boolean settle(Handle h, UUID runId, RunVerdict verdict) {
        Objects.requireNonNull(verdict, "verdict");
        return h.createUpdate("UPDATE runs SET status = " + quoted(RunState.SETTLED)
                                + ", verdict = :v, failure_reason = NULL," + NOT_PAUSED
                                + " dispatchable = false, finished_at = now(), updated_at = now()"
                                + " WHERE run_id = :r AND " + executing("status"))
                        .bind("v", verdict.spelling())
                        .bind("r", runId)
                        .execute()
                == 1;
    }

    /**
     * Creating, pending or running to failed with {@code reason} (admission met an immutable conflict, or chunks
     * failed or records are damaged at settlement): no longer dispatchable, ended now. Admission calls it after its
     * lease recheck, settlement with the run row locked.
     *
     * @return whether it applied; false when the run already ended (then nothing changed)
     */
    public static boolean fail(Handle h, UUID runId, String reason) {
        return h.createUpdate("UPDATE runs SET status = " + quoted(RunState.FAILED)
                                + ", verdict = NULL, failure_reason = :x," + NOT_PAUSED
                                + " dispatchable = false, finished_at = now(), updated_at = now()"
                                + " WHERE run_id = :r AND " + NOT_TERMINAL)
                        .bind("x", reason)
                        .bind("r", runId)
                        .execute()
                == 1;
    }

    /**
     * Creating, pending or running to cancelled, ending every authority over the run: no longer dispatchable, the
     * creation lease cleared and the plan generation incremented, so a creator or admission holding an older
     * generation fails its next recheck, even one that was delayed before it could read the state. Call with the
     * run row locked {@code FOR UPDATE} in the caller's transaction.
     *
     * @return whether it applied; false when the run already ended (then nothing changed)
     */
    public static boolean cancel(Handle h, UUID runId) {
        boolean applied = update(
                h,
                runId,
                "status = " + quoted(RunState.CANCELLED) + "," + NOT_PAUSED
                        + " dispatchable = false, creation_owner = NULL, creation_lease_expires_at = NULL,"
                        + " finished_at = now(), updated_at = now()",
                NOT_TERMINAL);
        if (applied) {
            h.createUpdate("UPDATE run_plans SET plan_generation = plan_generation + 1 WHERE run_id = :r")
                    .bind("r", runId)
                    .execute();
        }
        return applied;
    }

    /**
     * Pending or running to paused with {@code reason}: no longer dispatchable, and the state it left recorded for
     * {@link #resume}. Call with the run row locked {@code FOR UPDATE} in the caller's transaction.
     *
     * @return whether it applied; false when the run is neither pending nor running (then nothing changed)
     */
    public static boolean pause(Handle h, UUID runId, String reason) {
        return pause(h, runId, reason, false);
    }

    /**
     * Pending or running to paused with {@code reason}, as {@link #pause(Handle, UUID, String)}; with {@code
     * interrupts} the pause also asks workers to interrupt the chunks they hold of the run and give them back
     * ({@code runs.pause_interrupts}, read through {@link #interruptingPause}).
     *
     * @return whether it applied; false when the run is neither pending nor running (then nothing changed)
     */
    public static boolean pause(Handle h, UUID runId, String reason, boolean interrupts) {
        Objects.requireNonNull(reason, "reason");
        return h.createUpdate("UPDATE runs SET status = " + quoted(RunState.PAUSED)
                                + ", pause_reason = :x, paused_from = status, paused_at = now(), dispatchable = false,"
                                + " pause_interrupts = :i, updated_at = now() WHERE run_id = :r AND status IN ("
                                + quotedList(PAUSABLE) + ")")
                        .bind("x", reason)
                        .bind("i", interrupts)
                        .bind("r", runId)
                        .execute()
                == 1;
    }

    /**
     * Paused to paused, interrupting: a pause that let held chunks finish becomes one that interrupts them (a later
     * {@code vigilo run pause --now}, or a budget that ran out while the run was paused). The reason is replaced by
     * {@code reason}. Call with the run row locked {@code FOR UPDATE} in the caller's transaction.
     *
     * @return whether it applied; false when the run is not paused, or its pause already interrupts (then nothing
     *     changed)
     */
    public static boolean interruptPause(Handle h, UUID runId, String reason) {
        Objects.requireNonNull(reason, "reason");
        return h.createUpdate("UPDATE runs SET pause_interrupts = true, pause_reason = :x, updated_at = now()"
                                + " WHERE run_id = :r AND NOT pause_interrupts AND status = " + quoted(RunState.PAUSED))
                        .bind("x", reason)
                        .bind("r", runId)
                        .execute()
                == 1;
    }

    /**
     * Paused back to the state it was paused from (pending or running), dispatchable again. Call with the run row
     * locked {@code FOR UPDATE} in the caller's transaction.
     *
     * @return whether it applied; false when the run is not paused (then nothing changed)
     */
    public static boolean resume(Handle h, UUID runId) {
        return update(
                h,
                runId,
                "status = paused_from," + NOT_PAUSED + " dispatchable = true, updated_at = now()",
                "status = " + quoted(RunState.PAUSED));
    }

    /**
     * Settled or failed back to pending, to execute its errored cases again ({@code vigilo run rerun-errors}):
     * dispatchable again, the verdict, failure reason and end time cleared (they are kept in the rerun history by
     * the caller, in the same transaction). Call with the run row locked {@code FOR UPDATE} in the caller's
     * transaction, after the caller queued the chunks to execute again.
     *
     * @return whether it applied; false when the run is neither settled nor failed (then nothing changed)
     */
    public static boolean reopen(Handle h, UUID runId) {
        return update(
                h,
                runId,
                "status = " + quoted(RunState.PENDING) + ", verdict = NULL, failure_reason = NULL, finished_at = NULL,"
                        + " dispatchable = true, updated_at = now()",
                "status IN (" + quoted(RunState.SETTLED) + ", " + quoted(RunState.FAILED) + ")");
    }

    /**
     * A read-only predicate: the run whose status column is {@code column} (e.g. {@code r.status}) is executing
     * ({@link #EXECUTING}), {@code r.status IN ('pending', 'running')}.
     */
    public static String executing(String column) {
        return column + " IN (" + EXECUTING_LIST + ")";
    }

    /**
     * A read-only predicate: the run whose status column is {@code column} is pending or running (executing and not
     * paused: {@link #PAUSABLE}).
     */
    public static String runnable(String column) {
        return column + " IN (" + quotedList(PAUSABLE) + ")";
    }

    /**
     * A read-only predicate: the run whose columns are prefixed {@code prefix} (e.g. {@code r.}) is paused by a pause
     * that interrupts its held chunks ({@link #pause(Handle, UUID, String, boolean)}).
     */
    public static String interruptingPause(String prefix) {
        return prefix + "status = " + quoted(RunState.PAUSED) + " AND " + prefix + "pause_interrupts";
    }

    /**
     * A read-only predicate over {@code runs} aliased {@code run} joined with {@code run_plans} aliased {@code plan}:
     * the run awaits admission (creating, its plan ready, execution requested).
     */
    public static String awaitingAdmission(String run, String plan) {
        return run + ".status = " + quoted(RunState.CREATING) + " AND " + plan + ".plan_status = '"
                + PlanStatus.READY.spelling() + "' AND " + plan + ".execution_requested";
    }

    /** {@code 'pending', 'running'}: the states' SQL literals, in declaration order. */
    private static String quotedList(Set<RunState> states) {
        return EnumSet.copyOf(states).stream().map(RunLifecycle::quoted).collect(Collectors.joining(", "));
    }

    private static String quoted(RunState s) {
        return "'" + s.spelling() + "'";
    }

    private static boolean update(Handle h, UUID runId, String assignments, String guard) {
        return h.createUpdate("UPDATE runs SET " + assignments + " WHERE run_id = :r AND " + guard)
                        .bind("r", runId)
                        .execute()
                == 1;
    }
}
