package dev.vigilo.exec.worker;

import dev.vigilo.agent.sandbox.Sandboxes;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.Receipt;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

/**
 * Executes one claimed chunk: verifies it and its cases, runs the agent and the evaluators per case, and returns the
 * receipt to write. Interruption (lease lost, run stopped, worker stopping) ends it with a
 * {@link dev.vigilo.common.errors.CancelledException}. Thread-safe: chunk threads call it concurrently.
 */
interface ChunkExecutor extends AutoCloseable {
    /**
     * Executes the chunk of {@code lease}, writing its partial receipts (docs/execution.md, "Resume from partial
     * receipts") and referencing each through {@code partials} ({@link PartialLink#NONE}: none are written).
     */
    Receipt execute(ChunkTables.Lease lease, UUID worker, RunContext run, PartialLink partials);

    /** Executes the chunk without partial receipts. */
    default Receipt execute(ChunkTables.Lease lease, UUID worker, RunContext run) {
        return execute(lease, worker, run, PartialLink.NONE);
    }

    /** The worker's sandbox root, opened when the worker starts (executors that run no commands ignore it). */
    default void useSandboxes(Sandboxes root) {}

    /** The worker's fleet limiters, made when the worker starts (executors that call no model ignore them). */
    default void useLimiters(FleetLimiters limiters) {}

    /**
     * Where every run's model calls get their budget ({@link RunBudgets}), set by the worker before it claims
     * (executors that call no model ignore it).
     */
    default void useBudgets(ChunkExecution.Budgets budgets) {}

    /**
     * The longest a finished case entry waits for its partial receipt link ({@link Worker.Options#partialFlush});
     * empty: links per full batch only. Set before the first chunk (executors that write no partials ignore it).
     */
    default void flushPartialsAfter(Optional<Duration> partialFlush) {}

    @Override
    void close();
}
