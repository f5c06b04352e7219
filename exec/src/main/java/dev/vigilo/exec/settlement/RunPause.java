package dev.vigilo.exec.settlement;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.retry.RetryPolicy;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.BudgetTable;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.llm.Pricing;
import dev.vigilo.plan.RunLifecycle;
import dev.vigilo.plan.RunState;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code vigilo run pause} and {@code vigilo run resume} (docs/execution.md, "Pause and resume").
 *
 * <p>Pause: one control transaction, with the run row locked {@code FOR UPDATE}, moves the run from pending or running
 * to paused ({@link RunLifecycle#pause}: not dispatchable, the reason and the state it left recorded); then each
 * execution database this process reaches marks the run's shard rows paused, so claims there stop at once, also those
 * of a worker whose list of dispatchable runs predates the pause. Chunks already held run on and complete (renewals and
 * completions ignore the mark): a pause stops new work, it interrupts none. If those were the run's last chunks, the
 * run settles as usual. A pause {@code now} (also a budget's) interrupts them too: workers give them back, nothing of
 * them counts, no attempt is used.
 *
 * <p>Resume: the control transaction returns the run to the state it was paused from, dispatchable again; then each
 * execution database clears the marks. Both are repeatable: pausing a paused run, or resuming a running one, marks or
 * clears the shard rows again (that is how an execution database that could not be reached the first time is
 * finished) and changes nothing else. Thread-safe.
 */
public final class RunPause {
    private static final Logger LOG = LoggerFactory.getLogger(RunPause.class);
    private static final RetryPolicy RETRY = RetryPolicy.of(2, Duration.ofMillis(200), Duration.ofSeconds(1));

    /** The reason recorded for a pause asked for with {@code vigilo run pause}. */
    public static final String BY_COMMAND = "by vigilo run pause";
    /** The reason recorded for a pause asked for on the dashboard. */
    public static final String BY_DASHBOARD = "from the dashboard";
    /** The reason recorded when a run's budget cannot cover its next model call (an interrupting pause). */
    public static final String BUDGET = "budget";
    /** The reason recorded for an interrupting pause asked for with {@code vigilo run pause --now}. */
    public static final String BY_COMMAND_NOW = "by vigilo run pause --now";

    /** What {@link #pause} or {@link #resume} found. */
    public enum Outcome {
        /** This call paused the run. */
        PAUSED,
        /** The run was already paused; its shard rows were marked again where they were not. */
        ALREADY_PAUSED,
        /** This call resumed the run. */
        RESUMED,
        /** The run was not paused (pending or running); its shard rows were cleared again where still marked. */
        NOT_PAUSED
    }

    /**
     * @param outcome     what happened
     * @param status      the run's state after the call
     * @param shards      shard rows whose mark this call changed in the execution databases
     * @param unreachable execution databases whose shard rows could not be changed now (their alias and why); repeat
     *                    the command to finish them
     * @param placements  the aliases the run's shard routes name, sorted
     */
    public record Result(
            UUID runId,
            Outcome outcome,
            RunState status,
            int shards,
            List<String> unreachable,
            Set<String> placements) {
        public Result {
            Objects.requireNonNull(outcome, "outcome");
            Objects.requireNonNull(status, "status");
            unreachable = List.copyOf(unreachable);
            placements = Collections.unmodifiableSet(new TreeSet<>(placements));
        }
    }

    private final Placements placements;

    public RunPause(Placements placements) {
        this.placements = Objects.requireNonNull(placements, "placements");
    }

    /**
     * Pauses the run with {@code reason}.
     *
     * @throws NotFoundException no such run
     * @throws ConflictException the run is being created (nothing runs yet), or it ended (settled, failed, cancelled)
     */
    public Result pause(UUID runId, String reason) {
        return pause(runId, reason, false);
    }

    /**
     * Pauses the run with {@code reason}; with {@code now} the pause also interrupts the chunks workers hold of the run:
     * each worker's heartbeat sees it, interrupts them and gives them back with the attempt of their claim refunded
     * (nothing of an interrupted chunk is committed; after resume they are claimed again). Pausing a run already
     * paused without {@code now} makes its pause interrupt (its reason becomes {@code reason}); the outcome is then
     * still {@link Outcome#ALREADY_PAUSED}.
     *
     * @throws NotFoundException no such run
     * @throws ConflictException the run is being created (nothing runs yet), or it ended (settled, failed, cancelled)
     */
    public Result pause(UUID runId, String reason, boolean now) {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(reason, "reason");
        Set<String> routed = new TreeSet<>();
        Outcome outcome = placements.control().inTransaction(h -> {
            RunRecords.Run run = RunRecords.lock(h, runId, true);
            Outcome o = switch (run.status()) {
                case PAUSED -> {
                    if (now) {
                        RunLifecycle.interruptPause(h, runId, reason);
                    }
                    yield Outcome.ALREADY_PAUSED;
                }
                case PENDING, RUNNING -> {
                    if (!RunLifecycle.pause(h, runId, reason, now)) {
                        throw new IllegalStateException("run " + runId + " changed while its pause held its row");
                    }
                    yield Outcome.PAUSED;
                }
                case CREATING ->
                    throw new ConflictException("run " + runId + " is still being created or admitted; nothing runs"
                            + " yet to pause: pause it once `vigilo run status " + runId + "` says pending");
                default -> throw ended(runId, run, "pause");
            };
            routed.addAll(RunRecords.placementsOf(h, runId));
            return o;
        });
        if (outcome == Outcome.PAUSED) {
            LOG.info("run {} paused: {}", runId, reason);
        }
        return marked(runId, outcome, RunState.PAUSED, true, routed);
    }

    /**
     * New totals of a run's budget ({@code vigilo run resume --budget-usd N --budget-tokens N}); each empty when not
     * raised.
     */
    public record Raise(Optional<BigDecimal> maxCostUsd, Optional<Long> maxTokens) {
        /** No raise. */
        public static final Raise NONE = new Raise(Optional.empty(), Optional.empty());

        public Raise {
            Objects.requireNonNull(maxCostUsd, "maxCostUsd");
            Objects.requireNonNull(maxTokens, "maxTokens");
        }

        boolean any() {
            return maxCostUsd.isPresent() || maxTokens.isPresent();
        }
    }

    /**
     * Resumes the paused run.
     *
     * @throws NotFoundException no such run
     * @throws ConflictException the run is being created, or it ended (settled, failed, cancelled), or it is paused for
     *     its budget (resume it with {@link #resume(UUID, Raise)})
     */
    public Result resume(UUID runId) {
        return resume(runId, Raise.NONE);
    }

    /**
     * Raises the run's budget to the totals {@code raise} gives, then resumes the run if it is paused. A run paused for
     * its budget ({@link #BUDGET}) is resumed only with a raise; a raise applies to a pending or running run too.
     *
     * @throws NotFoundException no such run
     * @throws InvalidInputException a raise for a run without a budget, or one that does not exceed the limit in force
     * @throws ConflictException the run is being created, or it ended, or it is paused for its budget and {@code raise}
     *     raises nothing
     */
    public Result resume(UUID runId, Raise raise) {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(raise, "raise");
        Set<String> routed = new TreeSet<>();
        RunState[] now = new RunState[1];
        Outcome outcome = placements.control().inTransaction(h -> {
            RunRecords.Run run = RunRecords.lock(h, runId, true);
            if (RunLifecycle.EXECUTING.contains(run.status())) {
                raised(h, runId, raise, run.pauseReason().filter(BUDGET::equals).isPresent());
            }
            Outcome o = switch (run.status()) {
                case PAUSED -> {
                    if (!RunLifecycle.resume(h, runId)) {
                        throw new IllegalStateException("run " + runId + " changed while its resume held its row");
                    }
                    yield Outcome.RESUMED;
                }
                case PENDING, RUNNING -> Outcome.NOT_PAUSED;
                case CREATING ->
                    throw new ConflictException(
                            "run " + runId + " is still being created or admitted; it is not" + " paused");
                default -> throw ended(runId, run, "resume");
            };
            now[0] = RunRecords.run(h, runId).status();
            routed.addAll(RunRecords.placementsOf(h, runId));
            return o;
        });
        if (outcome == Outcome.RESUMED) {
            LOG.info("run {} resumed ({})", runId, now[0].spelling());
        }
        return marked(runId, outcome, now[0], false, routed);
    }

    /**
     * Checks and applies {@code raise} (the run row locked); a run paused for its budget ({@code budgetPaused}) needs
     * one.
     */
    private static void raised(Handle h, UUID runId, Raise raise, boolean budgetPaused) {
        Optional<BudgetTable.State> state = BudgetTable.read(h, runId);
        if (!raise.any()) {
            if (budgetPaused) {
                BudgetTable.State b = state.orElseThrow();
                throw new ConflictException("run " + runId + " is paused because its budget cannot cover its next model"
                        + " call (" + b.status().line() + "); resume it with a larger budget: `vigilo run resume "
                        + runId + (b.maxCostUsd().isPresent() ? " --budget-usd N`" : " --budget-tokens N`")
                        + ", N the new total");
            }
            return;
        }
        if (state.isEmpty()) {
            throw new InvalidInputException("run " + runId + " has no budget (its profile gives none); leave out"
                    + " --budget-usd and --budget-tokens");
        }
        BudgetTable.State b = state.get();
        if (raise.maxCostUsd().isPresent()) {
            BigDecimal to = raise.maxCostUsd().get();
            if (b.maxCostUsd().isEmpty()) {
                throw new InvalidInputException("--budget-usd " + Pricing.text(to) + ": run " + runId + "'s budget"
                        + " limits tokens only; raise it with --budget-tokens N");
            }
            if (to.compareTo(b.maxCostUsd().get()) <= 0) {
                throw new InvalidInputException("--budget-usd " + Pricing.text(to) + ": run " + runId + "'s budget is"
                        + " already $" + Pricing.text(b.maxCostUsd().get()) + "; give a larger total (spent so far $"
                        + Pricing.text(b.spent().costUsd()) + ")");
            }
        }
        if (raise.maxTokens().isPresent()) {
            long to = raise.maxTokens().get();
            if (b.maxTokens().isEmpty()) {
                throw new InvalidInputException("--budget-tokens " + to + ": run " + runId + "'s budget limits cost"
                        + " only; raise it with --budget-usd N");
            }
            if (to <= b.maxTokens().get()) {
                throw new InvalidInputException("--budget-tokens " + to + ": run " + runId + "'s budget is already "
                        + b.maxTokens().get() + " tokens; give a larger total (spent so far "
                        + b.spent().tokens()
                        + ")");
            }
        }
        BudgetTable.raise(h, runId, raise.maxCostUsd(), raise.maxTokens());
        LOG.info(
                "run {}: budget raised to {}",
                runId,
                BudgetTable.read(h, runId).orElseThrow().status().line());
    }

    private static ConflictException ended(UUID runId, RunRecords.Run run, String what) {
        return new ConflictException(
                "run " + runId + " is already " + run.status().spelling()
                        + run.verdict().map(v -> " (verdict " + v + ")").orElse("") + "; there is nothing to " + what);
    }

    /** Marks ({@code paused}) or clears the run's shard rows in every execution database this process reaches. */
    private Result marked(UUID runId, Outcome outcome, RunState status, boolean paused, Set<String> routed) {
        int changed = 0;
        List<String> unreachable = new ArrayList<>();
        for (String alias : placements.aliases()) {
            try {
                changed += RETRY.run(attempt -> LocalTransactions.inTransaction(
                        placements.jdbi(alias),
                        (paused ? "pause" : "resume") + " of run " + runId + " in execution database \"" + alias + "\"",
                        h -> h.createUpdate("UPDATE exec_run_shards SET paused = :p WHERE run_id = :r AND paused <> :p")
                                .bind("p", paused)
                                .bind("r", runId)
                                .execute()));
            } catch (UnavailableException e) {
                LOG.warn("{}", e.getMessage());
                unreachable.add(alias + ": " + e.getMessage());
            }
        }
        return new Result(runId, outcome, status, changed, unreachable, routed);
    }
}
