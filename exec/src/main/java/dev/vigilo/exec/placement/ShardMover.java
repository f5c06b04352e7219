package dev.vigilo.exec.placement;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.RunRecords;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code vigilo run move-shard}: moves one shard of an executing run to another execution database (docs/execution.md,
 * "Shard moves"). Steps, each durable before the next:
 * <ol>
 *   <li>Control: the route (locked {@code FOR UPDATE}, run row {@code FOR SHARE}) becomes {@code moving}: workers stop
 *       claiming from it and settlement waits.</li>
 *   <li>Source: the shard row is locked {@code FOR UPDATE} and set {@code moved}: completions there are refused
 *       from now on ({@link ChunkTables#complete} holds it {@code FOR SHARE} and requires it open).</li>
 *   <li>Target: the run snapshot, the shard snapshot (open, next route epoch) and every chunk row of the shard are
 *       copied in bounded statements ({@link ShardCopy}); receipts and tallies of done chunks travel with them, and
 *       dataset, plan and receipt objects stay where they are.</li>
 *   <li>Control: the route points at the target, its epoch incremented, {@code active} again.</li>
 * </ol>
 * A move interrupted at any step is finished by calling {@link #move} again (to the same or another target); rows
 * the target already holds are overwritten from the frozen source when their identity is the same, and refused as
 * a conflict otherwise. Thread-safe.
 */
public final class ShardMover {
    private static final Logger LOG = LoggerFactory.getLogger(ShardMover.class);

    /** What {@link #move} did. */
    public enum Outcome {
        /** This call moved the shard (or finished an interrupted move). */
        MOVED,
        /** The shard's route already points at the target; nothing was done. */
        ALREADY_THERE
    }

    /**
     * @param from   the placement the shard left (equal to {@code to} when nothing was done)
     * @param to     the placement holding the shard now
     * @param epoch  the route epoch now
     * @param chunks chunk rows copied
     */
    public record Result(UUID runId, int shard, Outcome outcome, String from, String to, long epoch, long chunks) {}

    private final Placements placements;
    private final Jdbi control;

    public ShardMover(Placements placements) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.control = placements.control();
    }

    /**
     * Moves {@code shard} of {@code runId} to the execution database {@code targetAlias}.
     *
     * @throws NotFoundException     no such run, or the run does not use the shard
     * @throws InvalidInputException the target is not a registered execution database, or the shard is out of range
     * @throws ConflictException     the run is not executing (creating, settled, failed), the target is draining,
     *                               or the target holds different records of the run
     * @throws CancelledException    the run was cancelled (before or during the move)
     * @throws UnavailableException  an execution database cannot be reached; repeat to finish the move
     * @throws DamagedException      the source's records contradict the route
     */
    public Result move(UUID runId, int shard, String targetAlias) {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(targetAlias, "targetAlias");
        if (shard < 0 || shard > 127) {
            throw new InvalidInputException("shard " + shard + " is out of range; shards are 0..127");
        }
        if (!placements.has(targetAlias)) {
            throw new InvalidInputException("execution database \"" + targetAlias + "\" is not in this process's"
                    + " execution configuration (" + placements.config().source() + "); known: "
                    + String.join(", ", placements.aliases()));
        }
        // Both databases answer before anything changes: a move that cannot proceed leaves the route active.
        Optional<RunRecords.Route> current = control.withHandle(h -> RunRecords.routes(h, runId, "")).stream()
                .filter(r -> r.shard() == shard)
                .findFirst();
        for (String alias : current.map(r -> java.util.List.of(r.placement(), targetAlias))
                .orElse(java.util.List.of(targetAlias))) {
            LocalTransactions.inTransaction(
                    placements.jdbi(alias),
                    "moving shard " + shard + " of run " + runId + ": execution database \"" + alias + "\"",
                    h -> h.execute("SELECT 1"));
        }
        RunRecords.Route route = control.inTransaction(h -> begin(h, runId, shard, targetAlias));
        if (route.active()) {
            return new Result(runId, shard, Outcome.ALREADY_THERE, targetAlias, targetAlias, route.epoch(), 0);
        }
        String source = route.placement();
        long epoch = route.epoch();
        Jdbi from = placements.jdbi(source);
        Jdbi to = placements.jdbi(targetAlias);
        String what = "moving shard " + shard + " of run " + runId + " from execution database \"" + source + "\" to \""
                + targetAlias + "\"";
        ShardCopy.Source src = LocalTransactions.inTransaction(
                from, what + " (source)", h -> ShardCopy.freeze(h, runId, shard, epoch, source));
        long copied = 0;
        try {
            LocalTransactions.inTransaction(to, what + " (target)", h -> {
                ShardCopy.prepareTarget(h, runId, shard, src, epoch + 1, targetAlias);
                return null;
            });
            long after = -1;
            while (true) {
                long a = after;
                Optional<ShardCopy.Page> page = LocalTransactions.inTransaction(
                        from, what + " (source)", h -> ShardCopy.page(h, runId, shard, a));
                if (page.isEmpty()) {
                    break;
                }
                LocalTransactions.inTransaction(to, what + " (target)", h -> {
                    ShardCopy.writePage(h, runId, page.get(), targetAlias);
                    return null;
                });
                copied += page.get().count();
                after = page.get().last();
            }
            long atTarget =
                    LocalTransactions.inTransaction(to, what + " (target)", h -> ShardCopy.count(h, runId, shard));
            if (copied != src.chunks() || atTarget != copied) {
                throw new DamagedException("shard " + shard + " of run " + runId + " has " + copied
                        + " chunk rows at \"" + source + "\" and " + atTarget + " at \"" + targetAlias + "\", its"
                        + " snapshot " + src.chunks() + "; the execution records were altered, nothing was routed");
            }
            control.useTransaction(h -> finish(h, runId, shard, source, epoch, targetAlias));
        } catch (CancelledException e) {
            closeTarget(runId, shard, targetAlias);
            throw e;
        }
        LOG.info(
                "run {}: shard {} moved from {} to {} ({} chunk rows, route epoch {})",
                runId,
                shard,
                source,
                targetAlias,
                copied,
                epoch + 1);
        return new Result(runId, shard, Outcome.MOVED, source, targetAlias, epoch + 1, copied);
    }

    /** Step 1: checks the run, the route and the target, and marks the route moving. */
    private static RunRecords.Route begin(Handle h, UUID runId, int shard, String target) {
        RunRecords.Run run = RunRecords.lock(h, runId, false);
        requireExecuting(run);
        Optional<RunRecords.Route> found = RunRecords.routes(h, runId, "FOR UPDATE").stream()
                .filter(r -> r.shard() == shard)
                .findFirst();
        RunRecords.Route route = found.orElseThrow(() -> new NotFoundException(
                "run " + runId + " has no shard " + shard + "; vigilo run status lists its shards"));
        Optional<String> state = h.createQuery("SELECT state FROM exec_placements WHERE alias = :a")
                .bind("a", target)
                .mapTo(String.class)
                .findOne();
        if (state.isEmpty()) {
            throw new InvalidInputException("execution database \"" + target + "\" is not registered in the control"
                    + " database; open it once with a process whose execution configuration lists it");
        }
        if (!"active".equals(state.get())) {
            throw new ConflictException("execution database \"" + target + "\" is " + state.get()
                    + " and takes no shard; vigilo placement activate " + target + " first");
        }
        switch (route.state()) {
            case "active" -> {
                if (route.placement().equals(target)) {
                    return route;
                }
                h.createUpdate("UPDATE exec_shard_routes SET state = 'moving' WHERE run_id = :r AND shard = :s")
                        .bind("r", runId)
                        .bind("s", shard)
                        .execute();
                return new RunRecords.Route(shard, route.placement(), "moving", route.epoch(), route.dispatchCursor());
            }
            case "moving" -> {
                if (route.placement().equals(target)) {
                    throw new InvalidInputException("shard " + shard + " of run " + runId + " is being moved away"
                            + " from \"" + target + "\"; finish that move by naming another target");
                }
                return route;
            }
            case "tombstoned" ->
                throw new CancelledException("run " + runId + " was cancelled; shard " + shard + " stays where it is");
            default ->
                throw new ConflictException("shard " + shard + " of run " + runId + " is still being admitted;"
                        + " move it once the run is pending");
        }
    }

    private static void requireExecuting(RunRecords.Run run) {
        switch (run.status()) {
            case PENDING, RUNNING, PAUSED -> {}
            case CANCELLED ->
                throw new CancelledException(
                        "run " + run.runId() + " was cancelled; its shards stay" + " where they are");
            case CREATING ->
                throw new ConflictException("run " + run.runId() + " is still being created or admitted;"
                        + " move shards once it is pending");
            default ->
                throw new ConflictException(
                        "run " + run.runId() + " is already " + run.status() + "; its shards no longer move");
        }
    }

    /** Step 4: points the route at the target, if it is still the move this call began or resumed. */
    private static void finish(Handle h, UUID runId, int shard, String source, long epoch, String target) {
        RunRecords.Run run = RunRecords.lock(h, runId, false);
        requireExecuting(run);
        RunRecords.Route now = RunRecords.routes(h, runId, "FOR UPDATE").stream()
                .filter(r -> r.shard() == shard)
                .findFirst()
                .orElseThrow();
        if (now.active() && now.placement().equals(target) && now.epoch() == epoch + 1) {
            return; // A concurrent call finished the same move.
        }
        if (!"moving".equals(now.state()) || !now.placement().equals(source) || now.epoch() != epoch) {
            throw new ConflictException("shard " + shard + " of run " + runId + " changed while it was copied (now "
                    + now.state() + " at \"" + now.placement() + "\", epoch " + now.epoch() + "); repeat the move");
        }
        h.createUpdate("UPDATE exec_shard_routes SET placement = :t, route_epoch = :e, state = 'active'"
                        + " WHERE run_id = :r AND shard = :s")
                .bind("t", target)
                .bind("e", epoch + 1)
                .bind("r", runId)
                .bind("s", shard)
                .execute();
    }

    /** After a cancellation interrupted the move: the target's copy must not stay open. Best effort. */
    private void closeTarget(UUID runId, int shard, String target) {
        try {
            LocalTransactions.inTransaction(
                    placements.jdbi(target),
                    "closing the copy of shard " + shard + " of run " + runId + " in \"" + target + "\"",
                    h -> ShardCopy.close(h, runId, shard));
        } catch (UnavailableException e) {
            LOG.warn("{}; it is never routed, and vigilo run cancel closes it when repeated", e.getMessage());
        }
    }
}
