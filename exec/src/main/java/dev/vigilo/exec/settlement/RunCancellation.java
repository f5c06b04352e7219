package dev.vigilo.exec.settlement;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.retry.RetryPolicy;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.plan.RunLifecycle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code vigilo run cancel} (docs/execution.md, "Cancellation"). One control transaction ends the run's authority:
 * status {@code cancelled}, not dispatchable, creation lease cleared and plan generation incremented (so a delayed
 * creator or admission fails its recheck and cannot reopen the run), every existing shard route tombstoned under
 * {@code FOR UPDATE} locks taken in ascending shard order (the fences admission holds {@code FOR SHARE}), and a
 * tombstone route inserted for every published shard admission had not reached. Then, outside that transaction, each
 * execution database this process reaches closes the run's open shard rows ({@code cancelled}), so completions and
 * claims there stop at once; an unreachable one is retried, then reported (repeating the command finishes it).
 *
 * <p>Nothing is deleted: chunks completed before the cancellation keep their receipts and stay listed by
 * {@link dev.vigilo.exec.view.RunResults}; no evaluator error is fabricated for cases that never ran. Thread-safe.
 */
public final class RunCancellation {
    private static final Logger LOG = LoggerFactory.getLogger(RunCancellation.class);
    private static final RetryPolicy RETRY = RetryPolicy.of(2, Duration.ofMillis(200), Duration.ofSeconds(1));

    /** What {@link #cancel} found. */
    public enum Outcome {
        /** This call cancelled the run. */
        CANCELLED,
        /** The run was already cancelled; the execution databases were closed again where still open. */
        ALREADY_CANCELLED
    }

    /**
     * @param outcome      what happened
     * @param tombstoned   shard routes tombstoned by this call (existing ones plus those inserted)
     * @param closedShards shard rows this call closed in the execution databases
     * @param unreachable  execution databases whose shard rows could not be closed now (their alias and why); repeat
     *                     the cancellation to finish them. Claims there already stop: the routes are tombstoned.
     * @param placements   the aliases the run's shard routes name (where its shard rows are to be closed), sorted;
     *                     a caller that could not open some configured database checks it against this set
     */
    public record Result(
            UUID runId,
            Outcome outcome,
            int tombstoned,
            int closedShards,
            List<String> unreachable,
            Set<String> placements) {
        public Result {
            unreachable = List.copyOf(unreachable);
            placements = Collections.unmodifiableSet(new TreeSet<>(placements));
        }
    }

    private final Placements placements;
    private final Jdbi control;

    public RunCancellation(Placements placements) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.control = placements.control();
    }

    /**
     * Cancels the run.
     *
     * @throws NotFoundException no such run
     * @throws ConflictException the run already settled or failed: there is nothing to cancel
     */
    public Result cancel(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        int[] tombstoned = {0};
        Set<String> routed = new TreeSet<>();
        Outcome outcome = control.inTransaction(h -> {
            RunRecords.Run run = RunRecords.lock(h, runId, true);
            Outcome o = switch (run.status()) {
                case CANCELLED -> Outcome.ALREADY_CANCELLED;
                case SETTLED, FAILED ->
                    throw new ConflictException("run " + runId + " is already "
                            + run.status()
                            + (run.verdict().map(v -> " (verdict " + v + ")").orElse(""))
                            + "; nothing to cancel");
                default -> {
                    tombstoned[0] = revoke(h, run);
                    yield Outcome.CANCELLED;
                }
            };
            routed.addAll(RunRecords.placementsOf(h, runId));
            return o;
        });
        if (outcome == Outcome.CANCELLED) {
            LOG.info("run {} cancelled: {} shard routes tombstoned", runId, tombstoned[0]);
        }
        int closed = 0;
        List<String> unreachable = new ArrayList<>();
        for (String alias : placements.aliases()) {
            try {
                closed += RETRY.run(attempt -> LocalTransactions.inTransaction(
                        placements.jdbi(alias),
                        "cancellation of run " + runId + " in execution database \"" + alias + "\"",
                        h -> h.createUpdate("UPDATE exec_run_shards SET state = 'cancelled' WHERE run_id = :r"
                                        + " AND state = 'open'")
                                .bind("r", runId)
                                .execute()));
            } catch (UnavailableException e) {
                LOG.warn("{}", e.getMessage());
                unreachable.add(alias + ": " + e.getMessage());
            }
        }
        return new Result(runId, outcome, tombstoned[0], closed, unreachable, routed);
    }

    /** Inside the control transaction that holds the run row: ends every authority over the run. */
    private static int revoke(Handle h, RunRecords.Run run) {
        UUID runId = run.runId();
        // Also ends a creator's or admission's lease: the plan generation moves, so one holding an older generation
        // fails its next recheck, even one that was delayed before it could read the status.
        if (!RunLifecycle.cancel(h, runId)) {
            throw new IllegalStateException("run " + runId + " ended while its cancellation held its row");
        }
        List<RunRecords.Route> routes = RunRecords.routes(h, runId, "FOR UPDATE");
        int n = h.createUpdate("UPDATE exec_shard_routes SET state = 'tombstoned' WHERE run_id = :r")
                .bind("r", runId)
                .execute();
        // Published shards admission never reached get a tombstone in the placement the frozen rule gives them, so a
        // delayed admission page finds the fence closed. Aliases never registered here cannot be admitted into
        // (the route's foreign key), so they need none.
        List<String> aliases = Placements.aliasesOf(run.initialPlacement());
        List<Integer> shards = new ArrayList<>();
        List<String> placementsOf = new ArrayList<>();
        h.createQuery("SELECT shard FROM run_plan_shards WHERE run_id = :r ORDER BY shard")
                .bind("r", runId)
                .mapTo(Integer.class)
                .forEach(s -> {
                    if (routes.stream().noneMatch(r -> r.shard() == s)) {
                        shards.add(s);
                        placementsOf.add(aliases.get(s % aliases.size()));
                    }
                });
        if (!shards.isEmpty()) {
            n += h.createUpdate("INSERT INTO exec_shard_routes (run_id, shard, placement, state)"
                            + " SELECT :r, t.s, t.a, 'tombstoned' FROM unnest(:s::int[], :a::text[]) AS t(s, a)"
                            + " WHERE EXISTS (SELECT 1 FROM exec_placements p WHERE p.alias = t.a) ORDER BY t.s"
                            + " ON CONFLICT (run_id, shard) DO NOTHING")
                    .bind("r", runId)
                    .bindArray("s", Integer.class, shards)
                    .bindArray("a", String.class, placementsOf)
                    .execute();
        }
        return n;
    }
}
