package dev.vigilo.exec.settlement;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.AgreementTallies;
import dev.vigilo.exec.record.GateTable;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.record.ShardTallies;
import dev.vigilo.exec.record.UsageTable;
import dev.vigilo.plan.RunLifecycle;
import dev.vigilo.plan.RunState;
import dev.vigilo.plan.RunVerdict;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settles a run once no chunk of it is queued or leased (docs/execution.md, "Settlement"): per shard, from the route's
 * current execution database only, it sums the chunk rows' tallies and folds the chunk identities with the plan's
 * settlement fold, compares both with the frozen shard snapshot and the control database's published shard rows, and
 * then records the gate table and the verdict in one control transaction. No object-storage read happens anywhere in
 * it, inside a transaction or not.
 *
 * <p>Outcomes: every chunk done and the records consistent: {@code settled} with the verdict its gates decide
 * ({@link GateResult#verdict}: {@code failed} if a gate failed, else {@code inconclusive} if a gate deciding on its
 * interval could not decide, else {@code passed}). Some chunk failed: the run ends {@code failed}, the gate table is still
 * written (cases of failed chunks count as never run) and no verdict is given. Records that contradict the plan
 * (fold, counts, tallies): the run ends {@code failed} with the damage named, without a gate table.
 *
 * <p>Safe to call repeatedly and concurrently: the control transaction locks the run row, acts only from
 * {@code pending}/{@code running}, and rechecks that no route moved since the reads. An unreachable execution
 * database is an {@link UnavailableException} naming its alias, and nothing changes. Thread-safe.
 */
public final class Settlement {
    private static final Logger LOG = LoggerFactory.getLogger(Settlement.class);
    /** Failed chunks a failure reason names (the rest are counted). */
    static final int NAMED_FAILURES = 3;

    /** What {@link #settleIfComplete} did. */
    public enum Outcome {
        /** This call settled the run (verdict recorded). */
        SETTLED,
        /** This call ended the run failed: a chunk failed, or the execution records are damaged. */
        FAILED,
        /** Chunks are still queued or leased, or a shard is being moved; nothing changed. */
        NOT_COMPLETE,
        /** The run is not executing (creating or cancelled); nothing changed. */
        NOT_ACTIVE,
        /** The run had already been settled or failed; nothing changed. */
        ALREADY_ENDED
    }

    /**
     * @param status the run's status afterwards
     * @param verdict the verdict, when settled
     * @param detail why nothing happened, or the failure reason
     * @param gates the gate table this call wrote (empty otherwise)
     */
    public record Result(
            UUID runId,
            Outcome outcome,
            RunState status,
            Optional<String> verdict,
            Optional<String> detail,
            List<GateResult> gates) {
        static Result of(UUID runId, Outcome outcome, RunState status, String detail) {
            return new Result(runId, outcome, status, Optional.empty(), Optional.of(detail), List.of());
        }
    }

    private final Placements placements;
    private final Jdbi control;

    public Settlement(Placements placements) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.control = placements.control();
    }

    /**
     * Settles the run if every chunk ended.
     *
     * @throws NotFoundException    no such run
     * @throws UnavailableException an execution database failed; nothing changed, call again later
     */
    public Result settleIfComplete(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        RunRecords.Run run = control.withHandle(h -> RunRecords.run(h, runId));
        if (!run.active()) {
            return notActive(run);
        }
        List<RunRecords.Route> routes = control.withHandle(h -> RunRecords.routes(h, runId, ""));
        if (routes.isEmpty()) {
            return Result.of(runId, Outcome.NOT_COMPLETE, run.status(), "the run has no shard routes yet");
        }
        for (RunRecords.Route r : routes) {
            if (!r.active()) {
                return Result.of(runId, Outcome.NOT_COMPLETE, run.status(), "shard " + r.shard() + " is " + r.state());
            }
        }
        Map<String, List<Integer>> groups = RunRecords.byPlacement(routes);
        for (var g : groups.entrySet()) {
            boolean open = LocalTransactions.inTransaction(
                    placements.jdbi(g.getKey()),
                    what(runId, g.getKey()),
                    h -> ShardTallies.anyOpen(h, runId, g.getValue()));
            if (open) {
                return Result.of(
                        runId,
                        Outcome.NOT_COMPLETE,
                        run.status(),
                        "chunks are still queued or leased in execution database \"" + g.getKey() + "\"");
            }
        }
        SettlementEvidence ev = new SettlementEvidence(placements, runId);
        ev.readPublished(control);
        for (var g : groups.entrySet()) {
            ev.readPlacement(g.getKey(), g.getValue());
        }
        ev.check(routes);
        return commit(run, routes, ev);
    }

    static String what(UUID runId, String alias) {
        return "settlement of run " + runId + " in execution database \"" + alias + "\"";
    }

    private static Result notActive(RunRecords.Run run) {
        boolean ended = run.status() == RunState.SETTLED || run.status() == RunState.FAILED;
        return new Result(
                run.runId(),
                ended ? Outcome.ALREADY_ENDED : Outcome.NOT_ACTIVE,
                run.status(),
                run.verdict(),
                Optional.of("the run is " + run.status()),
                List.of());
    }

    /** The single control transaction: rechecks status and routes, then records the outcome. */
    private Result commit(RunRecords.Run read, List<RunRecords.Route> routes, SettlementEvidence ev) {
        UUID runId = read.runId();
        CrashPoints.boundary("exec.settle");
        Result r = control.inTransaction(h -> {
            RunRecords.Run now = RunRecords.lock(h, runId, true);
            if (!now.active()) {
                return notActive(now);
            }
            if (!RunRecords.routes(h, runId, "FOR SHARE").equals(routes)) {
                return Result.of(runId, Outcome.NOT_COMPLETE, now.status(), "a shard route changed while settling");
            }
            if (!ev.problems().isEmpty()) {
                String reason = "run " + runId + ": its execution records are damaged: "
                        + ev.problems().get(0)
                        + (ev.problems().size() > 1 ? " (and " + (ev.problems().size() - 1) + " more)" : "")
                        + "; its results cannot be settled, create a new run";
                ended(runId, RunLifecycle.fail(h, runId, reason));
                return new Result(
                        runId, Outcome.FAILED, RunState.FAILED, Optional.empty(), Optional.of(reason), List.of());
            }
            List<GateResult> gates = ev.gateTable();
            GateTable.insert(h, runId, gates);
            UsageTable.insert(h, runId, ev.usage());
            AgreementTallies.insert(h, runId, ev.agreement());
            if (ev.failedChunks() > 0) {
                String reason = ev.failureReason();
                ended(runId, RunLifecycle.fail(h, runId, reason));
                return new Result(runId, Outcome.FAILED, RunState.FAILED, Optional.empty(), Optional.of(reason), gates);
            }
            RunVerdict verdict = GateResult.verdict(gates);
            ended(runId, RunLifecycle.settle(h, runId, verdict));
            return new Result(
                    runId, Outcome.SETTLED, RunState.SETTLED, Optional.of(verdict.spelling()), Optional.empty(), gates);
        });
        if (r.outcome() == Outcome.SETTLED || r.outcome() == Outcome.FAILED) {
            LOG.info(
                    "run {} {}{}",
                    runId,
                    r.status(),
                    r.verdict()
                            .map(v -> ": verdict " + v)
                            .orElse(r.detail().map(d -> ": " + d).orElse("")));
        }
        return r;
    }

    /** The transition cannot be refused: this transaction holds the run row and found it pending or running. */
    private static void ended(UUID runId, boolean applied) {
        if (!applied) {
            throw new IllegalStateException("run " + runId + " left pending and running while settlement held its row");
        }
    }
}
