package dev.vigilo.plan;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.DatabaseErrors;
import dev.vigilo.storage.ObjectRef;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * The publication commit of a run's plan: the one step after which the plan is ready (docs/run-preparation.md,
 * "Publication"). Its contract:
 *
 * <ul>
 *   <li><b>What must be current.</b> The caller's creation lease (owner, plan generation, expiry, run creating:
 *       {@link LeaseAuthority#recheck}, run first, locking the run row); the plan still preparing; complete coverage:
 *       the chunk cursor at the expected chunk count, every registered file acknowledged, and as many registered
 *       files as the verifier walked from the root. Anything else is refused before any write: a lost lease as
 *       fenced, an incomplete coverage as damaged, a plan already ready or rejected as fenced.
 *   <li><b>The atomic step.</b> One control transaction inserts the shard rows ({@code run_plan_shards}) and moves
 *       {@code run_plans} to ready with the verified root and whether execution is requested; its commit is the
 *       atomic step. Nothing that can fail runs after it: the caller only reports the result.
 *   <li><b>A crash before the commit</b> leaves the plan preparing with its files registered and acknowledged; a
 *       repeat of the command claims again (a new plan generation), restores the acknowledged chunks, re-verifies and
 *       publishes. <b>A crash after it</b> leaves the plan ready; a repeat re-verifies the root and, if asked,
 *       requests execution. Either way no file is written twice and nothing acknowledged is lost.
 *   <li><b>Outcome unknown.</b> When the commit itself fails, or the connection fails while it runs, the outcome is
 *       unknown: {@link dev.vigilo.common.errors.StateUnknownException}, and the repeat with the same run id finds
 *       which side of the commit the run is on.
 * </ul>
 *
 * <p>The crash points {@code plan.publish} (before the transaction) and {@code plan.publish.done} (after its commit)
 * bracket the atomic step for the crash tests. Stateless apart from its collaborators; one creator thread calls it.
 */
final class PlanPublication {
    private final Jdbi jdbi;
    private final LeaseAuthority lease;
    private final UUID runId;

    PlanPublication(Jdbi jdbi, LeaseAuthority lease) {
        this.jdbi = Objects.requireNonNull(jdbi, "jdbi");
        this.lease = Objects.requireNonNull(lease, "lease");
        this.runId = lease.runId();
    }

    /**
     * Commits the publication (the contract above): records the verified {@code root}, the {@code shards}' rows and
     * {@code execute} (whether execution is requested), and moves the plan to ready. The run stays creating:
     * admission (module exec) moves it to pending.
     *
     * @param expectedChunks the plan's chunk count, which the chunk cursor must have reached
     * @param filesWalked    the files the verifier reached from the root, which must be every registered file
     * @throws dev.vigilo.common.errors.FencedException       the lease was lost or the plan is no longer preparing
     * @throws dev.vigilo.common.errors.DamagedException      the coverage is incomplete
     * @throws dev.vigilo.common.errors.StateUnknownException the commit's outcome is unknown
     */
    void commit(ObjectRef root, long expectedChunks, long filesWalked, List<ShardTotals> shards, boolean execute) {
        try {
            CrashPoints.boundary("plan.publish");
            transaction(root, expectedChunks, filesWalked, shards, execute);
            CrashPoints.boundary("plan.publish.done");
        } catch (org.jdbi.v3.core.transaction.TransactionException e) {
            throw PlanErrors.stateUnknown(
                    runId,
                    "the publication commit failed (" + e.getMessage()
                            + "); its outcome is unknown: repeat the command with the same run id",
                    e);
        } catch (org.jdbi.v3.core.JdbiException e) {
            if (DatabaseErrors.isUnavailable(e)) {
                throw PlanErrors.stateUnknown(
                        runId,
                        "the control database connection failed during"
                                + " publication; its outcome is unknown: repeat the command with the same run id",
                        e);
            }
            throw e;
        }
    }

    private void transaction(
            ObjectRef root, long expectedChunks, long filesWalked, List<ShardTotals> shards, boolean execute) {
        jdbi.useTransaction(h -> {
            lease.recheck(h);
            Map<String, Object> m = h.createQuery("SELECT p.plan_chunk_cursor, p.plan_status,"
                            + " (SELECT count(*) FROM run_plan_objects o WHERE o.run_id = p.run_id) AS n,"
                            + " (SELECT count(*) FROM run_plan_objects o WHERE o.run_id = p.run_id AND NOT o.acknowledged) AS u"
                            + " FROM run_plans p WHERE p.run_id = :r")
                    .bind("r", runId)
                    .mapToMap()
                    .one();
            long cursor = ((Number) m.get("plan_chunk_cursor")).longValue();
            if (cursor != expectedChunks
                    || ((Number) m.get("u")).longValue() != 0
                    || ((Number) m.get("n")).longValue() != filesWalked) {
                throw PlanErrors.damaged(
                        runId,
                        "incomplete coverage: chunk cursor " + cursor + " of "
                                + expectedChunks + ", " + m.get("u") + " unacknowledged files, " + m.get("n")
                                + " registered vs " + filesWalked + " reachable from the root; repeat the command");
            }
            PlanStatus planStatus = PlanStatus.fromSpelling((String) m.get("plan_status"));
            if (planStatus != PlanStatus.PREPARING) {
                throw PlanErrors.fenced(runId, "plan is already " + planStatus);
            }
            ShardRows.insert(h, runId, shards, frozenPlacement(h));
            h.createUpdate("UPDATE run_plans SET plan_status = :ready, root_key = :k, root_length = :l,"
                            + " root_sha256 = :s, published_at = now(), execution_requested = :e WHERE run_id = :r")
                    .bind("ready", PlanStatus.READY.spelling())
                    .bind("k", root.key().value())
                    .bind("l", root.length())
                    .bind("s", root.sha256().toHex())
                    .bind("e", execute)
                    .bind("r", runId)
                    .execute();
        });
    }

    private String frozenPlacement(Handle h) {
        return h.createQuery("SELECT initial_placement FROM run_plans WHERE run_id = :r")
                .bind("r", runId)
                .mapTo(String.class)
                .one();
    }
}
