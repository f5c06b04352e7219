package dev.vigilo.exec.worker;

import dev.vigilo.agent.AgentEnvironment;
import dev.vigilo.agent.sandbox.SandboxKind;
import dev.vigilo.agent.sandbox.Sandboxes;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ErrorKind;
import dev.vigilo.common.errors.VigiloException;
import dev.vigilo.common.retry.RetryPolicy;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.OutageListener;
import dev.vigilo.exec.OutageWaits;
import dev.vigilo.exec.Outages;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.Service;
import dev.vigilo.exec.UsageSummary;
import dev.vigilo.exec.WaitBoard;
import dev.vigilo.exec.placement.ShardRoutes;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.LeaseHolders;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.ReceiptParser;
import dev.vigilo.exec.record.UsageTallies;
import dev.vigilo.exec.settlement.RunPause;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code vigilo worker}: claims chunk leases of dispatchable runs, executes their cases and completes each chunk with
 * its receipt under the lease (docs/execution.md, "Workers"). Also coordinates: resumes requested admissions whose
 * creator is gone and settles runs whose chunks all ended.
 *
 * <p>Threads: the thread calling {@link #run} claims chunks and coordinates; a pool of {@link #chunksHeld} threads
 * executes claimed chunks (enough chunks to keep {@code concurrency} cases busy, not one per case: docs/execution.md,
 * "Calls in flight"); their cases share the executor's bounded pools and at most {@code concurrency} executions are
 * in flight at once, waiting for models without threads; one heartbeat thread renews every held lease and interrupts the execution
 * of a chunk whose lease was lost or whose run stopped. {@link #stop} may be called from any thread (a signal
 * handler): it stops claiming, interrupts running agents and gives held chunks back.
 *
 * <p>Outages (docs/execution.md, "Outages"): a store or database operation that fails because the service cannot be
 * reached, is full or read-only ({@link Outages}) is tried again after a bounded back-off for as long as the outage
 * lasts, by the thread that needed it and with the chunk's lease held; it costs the chunk no attempt. Only the
 * chunk's own errors count as attempts. What a worker waits for is logged once per outage and when it ends, told to
 * the {@link Listener} and published in the control database for {@code run status} and the dashboard.
 */
public final class Worker {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);

    /**
     * @param concurrency  executions in flight at once, 1..{@value #MAX_CONCURRENCY}
     * @param exitWhenIdle return from {@link #run} once no run has work left that this worker could do
     * @param lease        a chunk lease's length
     * @param heartbeat    how often held leases are renewed (well below {@code lease})
     * @param poll         how long to wait before looking for work again when none was found
     * @param coordination how often to look for admissions to resume and runs to settle
     * @param creationLease the creation lease a resumed admission holds (5 minutes; tests shorten it)
     * @param chunkRetry   the back-off before a chunk's next attempt after one failed with an error of the chunk: the
     *                     bound of attempt {@code n + 1} after {@code n} attempts (only its back-off bounds are
     *                     used: a chunk has 8 attempts)
     * @param outageWait   the back-off between tries of an operation waiting out an outage (only its back-off bounds
     *                     are used: such waits last as long as the outage)
     * @param partialFlush the longest a finished case entry waits for its partial receipt link (1 s, {@link
     *                     #DEFAULT_PARTIAL_FLUSH}); empty: links are written per full batch only, so a run makes the
     *                     same durable steps whatever the clock says (the crash sweep needs that)
     * @param processes    the threads of blocking calls ({@code vigilo worker --processes}), 1..{@value
     *                     #MAX_CONCURRENCY}: command agents' processes, calls of http agents with tools, the answer
     *                     cache, judges and command evaluators run at most this many at once, the others of the
     *                     {@code concurrency} in flight queue (docs/execution.md, "Calls in flight"); at most the
     *                     concurrency is used. Default {@code min(concurrency, 256)} ({@link #defaultProcesses})
     */
    public record Options(
            int concurrency,
            boolean exitWhenIdle,
            Duration lease,
            Duration heartbeat,
            Duration poll,
            Duration coordination,
            Duration creationLease,
            RetryPolicy chunkRetry,
            RetryPolicy outageWait,
            Optional<Duration> partialFlush,
            int processes) {
        /** The most executions a worker holds in flight (docs/execution.md, "Calls in flight"). */
        public static final int MAX_CONCURRENCY = 4096;
        /** The longest a finished case entry waits for its partial receipt link by default. */
        public static final Duration DEFAULT_PARTIAL_FLUSH = Duration.ofSeconds(1);
        /** A chunk's back-off: 1 s after its first failed attempt, doubling, at most 60 s. */
        public static final RetryPolicy CHUNK_RETRY =
                RetryPolicy.of(ChunkTables.MAX_ATTEMPTS, Duration.ofSeconds(1), Duration.ofSeconds(60));
        /** An outage's back-off: tries at most 1 s apart at first, doubling, at most 30 s apart (full jitter). */
        public static final RetryPolicy OUTAGE_WAIT =
                RetryPolicy.of(Integer.MAX_VALUE, Duration.ofSeconds(1), Duration.ofSeconds(30));

        /** Options with the default back-offs ({@link #CHUNK_RETRY}, {@link #OUTAGE_WAIT}). */
        public Options(
                int concurrency,
                boolean exitWhenIdle,
                Duration lease,
                Duration heartbeat,
                Duration poll,
                Duration coordination,
                Duration creationLease) {
            this(
                    concurrency,
                    exitWhenIdle,
                    lease,
                    heartbeat,
                    poll,
                    coordination,
                    creationLease,
                    CHUNK_RETRY,
                    OUTAGE_WAIT);
        }

        /** Options with the default {@code partialFlush} ({@link #DEFAULT_PARTIAL_FLUSH}). */
        public Options(
                int concurrency,
                boolean exitWhenIdle,
                Duration lease,
                Duration heartbeat,
                Duration poll,
                Duration coordination,
                Duration creationLease,
                RetryPolicy chunkRetry,
                RetryPolicy outageWait) {
            this(
                    concurrency,
                    exitWhenIdle,
                    lease,
                    heartbeat,
                    poll,
                    coordination,
                    creationLease,
                    chunkRetry,
                    outageWait,
                    Optional.of(DEFAULT_PARTIAL_FLUSH),
                    defaultProcesses(concurrency));
        }

        /** The blocking threads a worker of {@code concurrency} has unless told: {@code min(concurrency, 256)}. */
        public static int defaultProcesses(int concurrency) {
            return Math.min(concurrency, ChunkExecution.DEFAULT_PROCESSES);
        }

        public Options {
            if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
                throw new IllegalArgumentException(
                        "concurrency must be in 1.." + MAX_CONCURRENCY + ", got " + concurrency);
            }
            Objects.requireNonNull(lease, "lease");
            Objects.requireNonNull(heartbeat, "heartbeat");
            Objects.requireNonNull(poll, "poll");
            Objects.requireNonNull(coordination, "coordination");
            Objects.requireNonNull(creationLease, "creationLease");
            Objects.requireNonNull(chunkRetry, "chunkRetry");
            Objects.requireNonNull(outageWait, "outageWait");
            Objects.requireNonNull(partialFlush, "partialFlush");
            if (processes < 1 || processes > MAX_CONCURRENCY) {
                throw new IllegalArgumentException("processes must be in 1.." + MAX_CONCURRENCY + ", got " + processes);
            }
        }

        /** These options with other back-offs (tests shorten them). */
        public Options withBackoffs(RetryPolicy chunkRetry, RetryPolicy outageWait) {
            return new Options(
                    concurrency,
                    exitWhenIdle,
                    lease,
                    heartbeat,
                    poll,
                    coordination,
                    creationLease,
                    chunkRetry,
                    outageWait,
                    partialFlush,
                    processes);
        }

        /** These options with another {@code partialFlush} (empty: partial receipt links per full batch only). */
        public Options withPartialFlush(Optional<Duration> partialFlush) {
            return new Options(
                    concurrency,
                    exitWhenIdle,
                    lease,
                    heartbeat,
                    poll,
                    coordination,
                    creationLease,
                    chunkRetry,
                    outageWait,
                    partialFlush,
                    processes);
        }

        /** These options with another {@code processes} (the blocking threads, {@code vigilo worker --processes}). */
        public Options withProcesses(int processes) {
            return new Options(
                    concurrency,
                    exitWhenIdle,
                    lease,
                    heartbeat,
                    poll,
                    coordination,
                    creationLease,
                    chunkRetry,
                    outageWait,
                    partialFlush,
                    processes);
        }

        /** Defaults: 60 s leases renewed every 15 s, 1 s polling, coordination every 5 s. */
        public static Options defaults(int concurrency, boolean exitWhenIdle) {
            return new Options(
                    concurrency,
                    exitWhenIdle,
                    Duration.ofSeconds(60),
                    Duration.ofSeconds(15),
                    Duration.ofSeconds(1),
                    Duration.ofSeconds(5),
                    dev.vigilo.plan.AdmissionLease.DURATION);
        }
    }

    /**
     * What a worker did, for its exit summary and metrics.
     *
     * @param casesExecuted the cases of its completed chunks this worker executed
     * @param casesCarried  the cases of its completed chunks it carried forward instead of executing them: from a
     *                      partial receipt chain (an earlier holder executed them; docs/execution.md, "Resume from
     *                      partial receipts") and, in a chunk {@code rerun-errors} queued again, the cases the rerun
     *                      kept from the earlier receipt; in no other count, so cases per second and CPU per case count
     *                      only work done here
     */
    public record Report(
            long chunksCompleted,
            long casesExecuted,
            long chunksRequeued,
            long chunksFailed,
            long chunksFenced,
            long admissions,
            long settlements,
            long casesCarried) {}

    /**
     * Receives progress from the worker's threads (implementations must be thread-safe and quick: they run on the
     * claiming, chunk and heartbeat threads), with the outage reports of {@link OutageListener}. Metrics are kept
     * through it.
     */
    public interface Listener extends OutageListener {
        /** A chunk lease was claimed. */
        default void chunkClaimed(UUID runId, long chunkIndex) {}

        /**
         * A chunk was completed with its receipt under the lease; {@code cases}: those of its cases this worker
         * executed (not those carried forward, {@link #casesCarried}).
         */
        default void chunkCompleted(UUID runId, long chunkIndex, int cases) {}

        /**
         * One case of a completed chunk this worker executed, as its receipt records it: the agent's wall time over
         * its attempts and whether it ended in an error. Called after {@link #chunkCompleted}, once per executed
         * case; never for a case carried forward ({@link #casesCarried}).
         */
        default void caseExecuted(UUID runId, Duration agentTime, boolean errored) {}

        /**
         * The cases of a completed chunk this worker carried forward instead of executing them: from the partial
         * receipt chain of an earlier holder (docs/execution.md, "Resume from partial receipts") and, in a chunk
         * {@code rerun-errors} queued again, those the rerun kept from the earlier receipt. In the receipt, but not
         * counted as executed, so rates and CPU per case count only work done here. Called after {@link
         * #chunkCompleted}, once per chunk that carried any.
         */
        default void casesCarried(UUID runId, long chunkIndex, int cases) {}

        /**
         * The model calls of a completed chunk's cases (agent and judges, as its receipt records them), once per
         * completed chunk, after {@link #chunkCompleted}: counted once, as the run's usage is.
         */
        default void modelUsage(UUID runId, UsageSummary usage) {}

        /** A chunk was given back (requeued), failed, or dropped because the lease was lost. */
        default void chunkGivenBack(UUID runId, long chunkIndex, String outcome) {}

        /** One heartbeat renewed {@code renewed} of the {@code held} leases. */
        default void heartbeat(int held, int renewed) {}

        /**
         * This worker settled a run (or ended it failed), in {@code took}: the settlement call's time, which reads
         * only aggregate sums of the chunk rows, so it does not grow with cases' epochs.
         */
        default void runSettled(UUID runId, String status, Duration took) {}

        /**
         * One of this worker's fleet limiters after a lease (docs/execution.md, "Fleet rate limit"): the fleet's
         * current rate, why it last changed, the circuit, and this process's calls in flight and waiting.
         */
        default void limiterLeased(LimiterReading limiter) {}

        Listener NONE = new Listener() {};
    }

    /**
     * A fleet limiter as this worker sees it after a lease.
     *
     * @param key                      the limiter key (sha256 of url, model and api-key variable name)
     * @param endpoint                 url, model and the key's variable name
     * @param requestsPerMinute        the configured request rate (0: none)
     * @param currentRequestsPerMinute the fleet's request rate now
     * @param rateFactor               the fraction of the configured rates in use
     * @param rateReason               why it last changed
     * @param circuit                  closed, open or half_open
     * @param circuitReason            why the circuit is in its state
     * @param inFlight                 this process's calls in flight
     * @param waiting                  this process's calls waiting for permits, slots or the circuit
     */
    public record LimiterReading(
            String key,
            String endpoint,
            int requestsPerMinute,
            long currentRequestsPerMinute,
            double rateFactor,
            String rateReason,
            String circuit,
            String circuitReason,
            int inFlight,
            int waiting) {}

    private final Placements placements;
    private final Options options;
    private final Listener listener;
    private final OutageWaits waits;
    private final RunContexts contexts;
    private final ChunkExecutor executor;
    private final Coordinator coordinator;
    private final RunBudgets budgets;
    private final UUID id = UUID.randomUUID();
    private final Map<ChunkTables.Held, Held> held = new ConcurrentHashMap<>();
    /** Claims tried so far; only the claiming thread uses it (which execution database a claim starts at). */
    private int claimRounds;

    /** The claiming thread's probes: the control database, and each execution database by alias. */
    private final OutageWaits.Probe controlProbe;

    private final Map<String, OutageWaits.Probe> claimProbes = new HashMap<>();
    /**
     * The claiming thread's next refresh of its lease-holder row per execution database ({@link System#nanoTime}),
     * absent before the first: the first claim in a database refreshes first, so a worker restarted after a kill
     * takes its dead predecessor's leases with its first claims.
     */
    private final Map<String, Long> holderRefreshDue = new HashMap<>();
    /** The heartbeat thread's probes, likewise. */
    private final OutageWaits.Probe heartbeatControlProbe;

    private final Map<String, OutageWaits.Probe> heartbeatProbes = new HashMap<>();
    private volatile WaitBoard board;
    private final Set<UUID> markedRunning = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final Semaphore wake = new Semaphore(0);
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong cases = new AtomicLong();
    /** Cases of completed chunks carried forward from partial receipt chains (not in {@link #cases}). */
    private final AtomicLong carried = new AtomicLong();

    private final AtomicLong requeued = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong fenced = new AtomicLong();
    private volatile Thread runner;
    /** The fleet limiters of the running worker (null before {@link #run}). */
    private volatile FleetLimiters fleetLimiters;
    /** Where this worker's sandbox attempt directories go ({@code <root>/<worker id>/}). */
    private final Path sandboxRoot;
    /** The environment sandbox programs are looked up in. */
    private final Map<String, String> variables;

    /** A worker whose agents and command evaluators run in this process's working directory. */
    public Worker(Placements placements, StorageConfig storage, Options options, Listener listener) {
        this(placements, storage, options, listener, AgentEnvironment.system());
    }

    /**
     * A worker whose agents and command evaluators run in {@code agentDirectory}: relative paths in a profile's
     * commands (a script named as an argument, a relative program) resolve from it rather than from this process's
     * working directory. Everything else of the agent environment is this process's.
     */
    public Worker(
            Placements placements, StorageConfig storage, Options options, Listener listener, Path agentDirectory) {
        this(
                placements,
                storage,
                options,
                listener,
                AgentEnvironment.system()
                        .withWorkingDirectory(Objects.requireNonNull(agentDirectory, "agentDirectory")));
    }

    /**
     * A worker whose agents and command evaluators run with {@code agentEnvironment}: its variables (inherited by
     * commands, the source of every {@code *_env} key, whose values are masked in everything the worker records),
     * working directory, scratch directory and waits between attempts.
     */
    public Worker(
            Placements placements,
            StorageConfig storage,
            Options options,
            Listener listener,
            AgentEnvironment agentEnvironment) {
        this(
                placements,
                storage,
                options,
                listener,
                agentEnvironment,
                agentEnvironment.scratchDirectory().resolve("vigilo-sandboxes"));
    }

    /**
     * A worker as above whose sandboxed cases get their directories under {@code sandboxRoot}
     * (docs/formats/agent-protocol.md, "Sandboxes"; the command line uses {@code VIGILO_HOME/sandboxes}). Workers
     * may share a root: each owns {@code <root>/<its id>/} and, when it starts, removes what dead workers left there.
     */
    public Worker(
            Placements placements,
            StorageConfig storage,
            Options options,
            Listener listener,
            AgentEnvironment agentEnvironment,
            Path sandboxRoot) {
        this.sandboxRoot = Objects.requireNonNull(sandboxRoot, "sandboxRoot");
        this.variables = agentEnvironment.variables();
        this.placements = Objects.requireNonNull(placements, "placements");
        this.options = Objects.requireNonNull(options, "options");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.waits = new OutageWaits(options.outageWait(), listener, () -> {
            WaitBoard b = board;
            if (b != null) {
                b.changed();
            }
        });
        this.controlProbe = waits.probe(Service.DATABASE, ExecutionConfig.CONTROL);
        this.heartbeatControlProbe = waits.probe(Service.DATABASE, ExecutionConfig.CONTROL);
        this.contexts = new RunContexts(placements, storage, waits);
        // The databases' own credentials are in the environment agents inherit: masked like a run's secrets.
        this.executor = new ChunkExecution(
                options.concurrency(),
                options.processes(),
                agentEnvironment.withSecrets(agentEnvironment.secrets().and(placements.credentials())));
        this.coordinator = new Coordinator(placements, storage, options.creationLease(), listener);
        this.budgets = new RunBudgets(placements, id, options.lease(), this::budgetExhausted);
        executor.flushPartialsAfter(options.partialFlush());
        executor.useBudgets((run, pricing) -> budgets.limiter(run.runId(), run.configuration(), pricing));
    }

    /**
     * A run's budget cannot cover its next model call (called on the thread of that call): the run is paused for its
     * budget, interrupting, and this worker interrupts the chunks it holds of the run at once (other workers do at
     * their heartbeat); they are given back with their attempts refunded.
     */
    private void budgetExhausted(UUID runId) {
        // A case thread of a chunk already interrupted for the same reason must still be able to write the pause.
        boolean interrupted = Thread.interrupted();
        try {
            new RunPause(placements).pause(runId, RunPause.BUDGET, true);
        } catch (RuntimeException e) {
            LOG.warn("run {}: cannot pause it for its budget: {}", runId, e.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        for (Held h : held.values()) {
            if (h.lease().runId().equals(runId)) {
                interrupt(h);
            }
        }
    }

    /**
     * Takes this worker's sandbox root, removing what dead workers left in it (directories, cgroups with their
     * processes, containers), and says which sandboxes this worker can run. A root that cannot be taken is logged:
     * runs without a sandbox still run, and a run with one fails its chunks with that reason.
     */
    private Sandboxes openSandboxes() {
        Sandboxes s;
        try {
            s = Sandboxes.open(sandboxRoot, id.toString(), variables);
        } catch (RuntimeException e) {
            LOG.warn("sandboxes unavailable on this worker: {}", e.getMessage());
            return null;
        }
        if (!s.removedOwners().isEmpty()) {
            LOG.info("removed the sandboxes dead workers left in {}: {}", sandboxRoot, s.removedOwners());
        }
        List<String> kinds = new ArrayList<>();
        for (SandboxKind k : List.of(SandboxKind.BWRAP, SandboxKind.PODMAN)) {
            String program = k.program().orElseThrow();
            kinds.add(program + (Sandboxes.find(program, variables).isPresent() ? " found" : " not found"));
        }
        LOG.info(
                "sandboxes in {}: {}; bwrap limits by {}", s.directory(), String.join(", ", kinds), s.limitMechanism());
        executor.useSandboxes(s);
        return s;
    }

    /** This worker's id: the lease owner recorded on the chunks it holds. */
    public UUID id() {
        return id;
    }

    /**
     * One claimed chunk being executed. {@code lost}: its lease was taken over (its result is dropped); {@code
     * interrupted}: its run was paused by an interrupting pause (it is given back with its attempt refunded).
     */
    private record Held(
            String placement,
            ChunkTables.Lease lease,
            Future<?> future,
            AtomicBoolean lost,
            AtomicBoolean interrupted) {}

    /**
     * Claims and executes chunks until {@link #stop} is called (or, with {@code exitWhenIdle}, until no work is
     * left), then gives back what it holds and returns.
     */
    public Report run() {
        runner = Thread.currentThread();
        Sandboxes sandboxes = openSandboxes();
        FleetLimiters limiters = new FleetLimiters(placements.control(), id, listener::limiterLeased);
        executor.useLimiters(limiters);
        fleetLimiters = limiters;
        board = new WaitBoard(placements.control(), id, waits::current);
        ExecutorService chunks =
                Executors.newFixedThreadPool(chunksHeld(options.concurrency()), Threads.daemonFactory("chunk"));
        ScheduledExecutorService heartbeat =
                Executors.newSingleThreadScheduledExecutor(Threads.daemonFactory("heartbeat"));
        long beat = options.heartbeat().toMillis();
        heartbeat.scheduleWithFixedDelay(this::heartbeat, beat, beat, TimeUnit.MILLISECONDS);
        long lastCoordination = System.nanoTime();
        long nextCoordination = lastCoordination;
        try {
            while (!stopping.get() && !Thread.currentThread().isInterrupted()) {
                // Wake-ups from here on (a chunk ending while this round claims or coordinates) cut the pause below
                // short: draining them just before the pause instead lost those, and the freed slot or the ended
                // chunk's settlement waited a whole poll interval.
                wake.drainPermits();
                long now = System.nanoTime();
                // A chunk that just ended may complete its run: settle it after one poll interval rather than at
                // the next scheduled round, so a run's verdict (and --exit-when-idle) follows its last chunk; while
                // other chunks still end, the interval batches their checks into one.
                boolean settleDue = coordinator.settlementRequested()
                        && now - lastCoordination >= options.poll().toNanos();
                if (now - nextCoordination >= 0 || settleDue) {
                    coordinator.coordinate();
                    lastCoordination = System.nanoTime();
                    nextCoordination = lastCoordination + options.coordination().toNanos();
                }
                int outageFailures = 0;
                boolean noneClaimable = false;
                if (wantsChunk()) {
                    Optional<Claimed> c = claimOne();
                    if (c.isPresent()) {
                        start(chunks, c.get());
                        continue;
                    }
                    outageFailures = claimOutageFailures();
                    noneClaimable = outageFailures == 0;
                }
                // This worker's last chunk ended and nothing is left to claim: nothing else would batch with its
                // settlement check, so settle now rather than a poll interval later (the end of an evaluation,
                // with --exit-when-idle its exit, follows the last chunk at once).
                if (noneClaimable && held.isEmpty() && coordinator.settlementRequested()) {
                    coordinator.coordinate();
                    lastCoordination = System.nanoTime();
                    nextCoordination = lastCoordination + options.coordination().toNanos();
                }
                if (options.exitWhenIdle() && held.isEmpty() && idle()) {
                    break;
                }
                // While a database is out, look again after the outage back-off rather than every poll interval.
                long pause = options.poll().toMillis();
                if (outageFailures > 0) {
                    pause = Math.max(pause, waits.backoff(outageFailures).toMillis());
                }
                wake.tryAcquire(pause, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            stopping.set(true);
            held.values().forEach(h -> h.future().cancel(true));
            chunks.shutdown();
            try {
                if (!chunks.awaitTermination(30, TimeUnit.SECONDS)) {
                    LOG.warn("chunks still executing after 30 s; their leases expire on their own");
                } else {
                    giveBackUnstarted();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            heartbeat.shutdownNow();
            forgetHolder();
            // What this worker's grants did not spend is free again for the other workers.
            budgets.releaseAll();
            executor.close();
            limiters.close();
            contexts.close();
            board.close();
            if (sandboxes != null) {
                sandboxes.close();
            }
        }
        return new Report(
                completed.get(),
                cases.get(),
                requeued.get(),
                failed.get(),
                fenced.get(),
                coordinator.admissions(),
                coordinator.settlements(),
                carried.get());
    }

    /**
     * Gives back the chunks whose task was cancelled before it ran (claimed just as the worker stopped): a task that
     * ran removed its chunk from {@link #held} when it ended, so once the pool has terminated whatever is left there
     * never ran and would otherwise stay leased until its lease expired.
     */
    private void giveBackUnstarted() {
        for (var e : held.entrySet()) {
            Held h = e.getValue();
            String what =
                    "chunk " + h.lease().chunkIndex() + " of run " + h.lease().runId();
            giveBack(
                    new Claimed(h.placement(), h.lease()),
                    h.lost(),
                    h.interrupted(),
                    what,
                    new CancelledException(what + ": the worker" + " stopped before it started"));
            held.remove(e.getKey());
        }
    }

    /**
     * The most chunks a worker of {@code concurrency} holds at once: all of them up to 16 (as many chunks as cases, as
     * before 4,096 calls in flight), beyond that 16 plus two chunks of 100 cases (the largest a plan makes) per 100
     * cases in flight: a chunk's tail keeps few cases in flight, so twice what {@code concurrency}
     * needs keeps it busy while chunks end, and a chunk thread per case (4,096 threads) is not held. 256: 22 chunks;
     * 1,024: 38; 4,096: 98.
     */
    static int chunksHeld(int concurrency) {
        return Math.min(concurrency, 16 + 2 * ((concurrency + 99) / 100));
    }

    /**
     * Whether to claim another chunk: fewer than {@link #chunksHeld} held and, beyond 16, fewer cases in the held
     * chunks than twice the concurrency (chunks of few cases need more of them; many large ones are enough).
     */
    private boolean wantsChunk() {
        int n = held.size();
        int concurrency = options.concurrency();
        if (n >= chunksHeld(concurrency)) {
            return false;
        }
        if (n < 16) {
            return true;
        }
        long cases = 0;
        for (Held h : held.values()) {
            cases += h.lease().seed().caseCount();
        }
        return cases < 2L * concurrency;
    }

    /** Stops claiming and gives held chunks back; {@link #run} returns soon after. Callable from any thread. */
    public void stop() {
        stopping.set(true);
        held.values().forEach(h -> h.future().cancel(true));
        wake.release();
    }

    private record Claimed(String placement, ChunkTables.Lease lease) {}

    /**
     * Claims one chunk, if any database answers and has one. A database that is out is noted by its probe (logged once
     * per outage) and skipped until the next round.
     */
    private Optional<Claimed> claimOne() {
        Map<String, List<ChunkTables.Claimable>> routes;
        try {
            routes = ShardRoutes.claimable(placements.control());
            controlProbe.answered();
        } catch (RuntimeException e) {
            if (!controlProbe.failed(e)) {
                LOG.warn("cannot read dispatchable runs from the control database: {}", e.getMessage());
            }
            return Optional.empty();
        }
        List<ChunkTables.Held> executing = List.copyOf(held.keySet());
        // Each claim starts at the next execution database: in a fixed order every worker would drain the first
        // database's chunks before touching the second's, and only one database's bookkeeping would work at a time
        // (docs/execution.md, "Workers").
        List<Map.Entry<String, List<ChunkTables.Claimable>>> order = new ArrayList<>(routes.entrySet());
        if (!order.isEmpty()) {
            Collections.rotate(order, -Math.floorMod(claimRounds++, order.size()));
        }
        for (var entry : order) {
            String alias = entry.getKey();
            if (!placements.has(alias)) {
                continue;
            }
            OutageWaits.Probe probe = claimProbes.computeIfAbsent(alias, a -> waits.probe(Service.DATABASE, a));
            refreshHolder(alias);
            Optional<ChunkTables.Lease> lease;
            try {
                lease = LocalTransactions.inTransaction(
                        placements.jdbi(alias),
                        "claim in execution database \"" + alias + "\"",
                        h -> ChunkTables.claim(h, entry.getValue(), id, options.lease(), executing));
                probe.answered();
            } catch (RuntimeException e) {
                if (!probe.failed(e)) {
                    LOG.warn("cannot claim from execution database \"{}\": {}", alias, e.getMessage());
                }
                continue;
            }
            if (lease.isPresent()) {
                UUID run = lease.get().runId();
                markRunning(run);
                listener.chunkClaimed(run, lease.get().chunkIndex());
                return Optional.of(new Claimed(alias, lease.get()));
            }
        }
        return Optional.empty();
    }

    /**
     * Records this worker as a lease holder of execution database {@code alias} when due (first, then every
     * coordination interval), ending at once the leases of holders of this machine's pid space that no longer run
     * (docs/execution.md, "Resume after a kill"). A failure is left to the claim that follows, whose probe reports an
     * outage; the dead holders' leases then expire as before.
     */
    private void refreshHolder(String alias) {
        long now = System.nanoTime();
        Long due = holderRefreshDue.get(alias);
        if (due != null && now - due < 0) {
            return;
        }
        List<LeaseHolders.Ended> ended;
        try {
            ended = LocalTransactions.inTransaction(
                    placements.jdbi(alias),
                    "lease holder refresh in execution database \"" + alias + "\"",
                    h -> LeaseHolders.refresh(h, LeaseHolders.Holder.current(id)));
        } catch (RuntimeException e) {
            LOG.debug("cannot refresh the lease holder row in execution database \"{}\": {}", alias, e.getMessage());
            return;
        }
        holderRefreshDue.put(alias, now + options.coordination().toNanos());
        for (LeaseHolders.Ended dead : ended) {
            LOG.info(
                    "execution database \"{}\": worker pid {} on this machine no longer runs; its {} chunk lease(s)"
                            + " end now instead of at their expiry",
                    alias,
                    dead.holder().process().pid(),
                    dead.leases());
        }
    }

    /** Removes this worker's lease-holder rows at its stop (best effort: a row left behind is removed later). */
    private void forgetHolder() {
        for (String alias : holderRefreshDue.keySet()) {
            try {
                LocalTransactions.inTransaction(
                        placements.jdbi(alias), "lease holder removal in execution database \"" + alias + "\"", h -> {
                            LeaseHolders.forget(h, id);
                            return null;
                        });
            } catch (RuntimeException e) {
                LOG.debug("cannot remove the lease holder row in execution database \"{}\": {}", alias, e.getMessage());
            }
        }
    }

    /** The most consecutive outage failures of the claiming thread's probes (0 when every database answered). */
    private int claimOutageFailures() {
        int most = controlProbe.failures();
        for (OutageWaits.Probe p : claimProbes.values()) {
            most = Math.max(most, p.failures());
        }
        return most;
    }

    /**
     * Marks the run running on this worker's first claim of it. A failure leaves the claim standing (the chunk is
     * executed; the mark is tried again with the run's next claim).
     */
    private void markRunning(UUID run) {
        if (!markedRunning.add(run)) {
            return;
        }
        try {
            ShardRoutes.markRunning(placements.control(), run);
        } catch (RuntimeException e) {
            markedRunning.remove(run);
            if (!controlProbe.failed(e)) {
                LOG.warn("cannot mark run {} running (tried again with its next claim): {}", run, e.getMessage());
            }
        }
    }

    /**
     * Whether no unfinished run has work this worker could do. A paused run has none (nothing of it is claimed); a
     * chunk that just ended is settled first. A run whose execution databases this worker all
     * reaches keeps it busy until the run ends (it may admit, claim, or settle it). A run it reaches only in part keeps
     * it busy while a reached database still holds queued or leased chunks of the run; admission and settlement of
     * such a run are left to workers that reach all of it. A run it reaches nowhere is not its work.
     */
    private boolean idle() {
        if (coordinator.settlementRequested()) {
            return false; // a chunk just ended: settle its run first (a paused run's last chunk settles it too)
        }
        try {
            for (var run : ShardRoutes.unfinished(placements.control()).entrySet()) {
                if (placements.aliases().containsAll(run.getValue())) {
                    return false;
                }
                for (String alias : run.getValue()) {
                    if (placements.has(alias)
                            && placements.jdbi(alias).withHandle(h -> ChunkTables.unfinished(h, run.getKey()))) {
                        return false;
                    }
                }
            }
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void start(ExecutorService pool, Claimed c) {
        AtomicBoolean lost = new AtomicBoolean();
        AtomicBoolean interrupted = new AtomicBoolean();
        ChunkTables.Held key = new ChunkTables.Held(c.lease().runId(), c.lease().chunkIndex());
        FutureTask<Void> task = new FutureTask<>(
                () -> {
                    try {
                        execute(c, lost, interrupted);
                    } finally {
                        held.remove(key);
                        wake.release();
                    }
                },
                null);
        // Registered before it runs, so the heartbeat covers the lease from the start.
        held.put(key, new Held(c.placement(), c.lease(), task, lost, interrupted));
        pool.execute(task);
    }

    /**
     * Runs on a chunk thread: execute, write the receipt, complete; on failure requeue or fail under the lease. The
     * context's store and cache wait out store outages, and the completion waits out outages of its database, all
     * with the lease held: a completion whose commit was lost is replayed and recognised ({@link ChunkTables#complete}),
     * and one whose lease was taken over meanwhile is fenced.
     */
    private void execute(Claimed c, AtomicBoolean lost, AtomicBoolean interrupted) {
        ChunkTables.Lease lease = c.lease();
        String what = "chunk " + lease.chunkIndex() + " of run " + lease.runId();
        try {
            RunContext ctx = contexts.get(lease.runId(), c.placement());
            // Each partial receipt is referenced by one fenced update in a short transaction of its own; an outage
            // is not waited out here (the writer logs it, and the next link's reference covers this one's cases).
            PartialLink partials = partial -> LocalTransactions.inTransaction(
                    placements.jdbi(c.placement()),
                    "partial receipt of " + what,
                    h -> ChunkTables.referencePartial(h, lease, partial));
            Receipt receipt = executor.execute(lease, id, ctx, partials);
            ObjectRef ref = ctx.store()
                    .create(
                            Receipt.key(lease.runId(), lease.chunkIndex(), lease.generation()),
                            ReceiptParser.toJson(receipt),
                            Deadline.after(Duration.ofSeconds(120)));
            ChunkTables.Tallies tallies = ChunkTables.Tallies.of(receipt);
            ChunkTables.Completion outcome = waits.await(
                    Service.DATABASE,
                    c.placement(),
                    attempt -> LocalTransactions.inTransaction(
                            placements.jdbi(c.placement()),
                            "completion of " + what,
                            h -> ChunkTables.complete(h, lease, ref, tallies)));
            switch (outcome) {
                case COMPLETED -> {
                    completed.incrementAndGet();
                    // Not executed here, counted apart: entries carried from a partial chain (an earlier holder
                    // executed them) and, in a chunk rerun-errors queued again, the cases kept from its receipt.
                    Set<Long> carriedHere = new HashSet<>();
                    receipt.resumed().ifPresent(r -> r.carried().forEach(x -> carriedHere.add(x.ordinal())));
                    receipt.rerun().ifPresent(r -> {
                        Set<Long> rerun = r.executed().stream()
                                .map(Receipt.Executed::ordinal)
                                .collect(Collectors.toSet());
                        receipt.cases().stream()
                                .map(Receipt.CaseResult::ordinal)
                                .filter(o -> !rerun.contains(o))
                                .forEach(carriedHere::add);
                    });
                    int executedHere = receipt.cases().size() - carriedHere.size();
                    cases.addAndGet(executedHere);
                    carried.addAndGet(carriedHere.size());
                    listener.chunkCompleted(lease.runId(), lease.chunkIndex(), executedHere);
                    if (!carriedHere.isEmpty()) {
                        listener.casesCarried(lease.runId(), lease.chunkIndex(), carriedHere.size());
                    }
                    for (Receipt.CaseResult rc : receipt.cases()) {
                        if (!carriedHere.contains(rc.ordinal())) {
                            listener.caseExecuted(lease.runId(), Duration.ofMillis(rc.agentMillis()), rc.errored());
                        }
                    }
                    Receipt.Usage used = receipt.usageByScope().get(Receipt.ALL_CASES);
                    if (used != null) {
                        listener.modelUsage(lease.runId(), UsageTallies.summary(used.models()));
                    }
                    coordinator.settleSoon(lease.runId());
                }
                case FENCED, SHARD_CLOSED -> {
                    fenced.incrementAndGet();
                    listener.chunkGivenBack(lease.runId(), lease.chunkIndex(), "fenced");
                    LOG.info("{}: result dropped ({}); another worker or the run's state owns it now", what, outcome);
                }
            }
        } catch (RuntimeException e) {
            giveBack(c, lost, interrupted, what, e);
        }
    }

    private void giveBack(Claimed c, AtomicBoolean lost, AtomicBoolean interrupted, String what, RuntimeException e) {
        ChunkTables.Lease lease = c.lease();
        if (lost.get()) {
            fenced.incrementAndGet();
            listener.chunkGivenBack(lease.runId(), lease.chunkIndex(), "fenced");
            LOG.info("{}: lease lost while executing; dropped", what);
            return;
        }
        if (interrupted.get()) {
            // An interrupting pause: the chunk did nothing wrong, so its claim's attempt is refunded, and it is
            // claimable again as soon as the run is resumed (claims of a paused run wait anyway).
            Thread.interrupted();
            try {
                boolean mine = giveBackWrite(
                        c,
                        "give-back of " + what,
                        stopping.get(),
                        h -> ChunkTables.requeue(h, lease, Duration.ZERO, "interrupted by a pause of its run", true));
                if (mine) {
                    requeued.incrementAndGet();
                    listener.chunkGivenBack(lease.runId(), lease.chunkIndex(), "requeued");
                    LOG.info("{}: interrupted by a pause of its run and given back (no attempt used)", what);
                }
            } catch (RuntimeException again) {
                LOG.warn("{}: cannot give the chunk back ({}); its lease expires on its own", what, again.getMessage());
            }
            return;
        }
        boolean cancelled = stopping.get() || Thread.currentThread().isInterrupted() || isCancellation(e);
        Thread.interrupted(); // the database writes below must not be aborted by our own interrupt
        String message = LocalTransactions.rootMessage(e);
        // An outage that reached this far (an operation outside the waiting store, cache and transactions) still
        // costs the chunk no attempt: it is given back with its attempt refunded, after the outage back-off's cap.
        boolean outage = !cancelled && Outages.classify(e).isPresent();
        try {
            if (!cancelled && isDamage(e)) {
                boolean mine =
                        giveBackWrite(c, "failing " + what, false, h -> ChunkTables.fail(h, lease, e.getMessage()));
                if (mine) {
                    failed.incrementAndGet();
                    listener.chunkGivenBack(lease.runId(), lease.chunkIndex(), "failed");
                    LOG.warn("{} failed: {}", what, e.getMessage());
                    coordinator.settleSoon(lease.runId());
                }
                return;
            }
            Duration backoff =
                    cancelled ? Duration.ZERO : outage ? options.outageWait().maxBackoff() : backoff(lease.attempts());
            String reason = cancelled ? "worker stopped" : message;
            boolean mine = giveBackWrite(
                    c, "requeue of " + what, cancelled, h -> ChunkTables.requeue(h, lease, backoff, reason, outage));
            if (mine) {
                requeued.incrementAndGet();
                listener.chunkGivenBack(lease.runId(), lease.chunkIndex(), "requeued");
                if (outage) {
                    LOG.warn(
                            "{} given back without counting its attempt (an outage), retried in {} s: {}",
                            what,
                            backoff.toSeconds(),
                            message);
                } else if (!cancelled) {
                    LOG.warn(
                            "{} attempt {} failed, retried in {} s: {}",
                            what,
                            lease.attempts(),
                            backoff.toSeconds(),
                            message);
                }
            }
        } catch (RuntimeException again) {
            LOG.warn("{}: cannot give the chunk back ({}); its lease expires on its own", what, again.getMessage());
        }
    }

    /**
     * A give-back's write under the lease: tried once when the worker stops (it must not hang on an outage: the
     * lease then expires on its own), else waiting out outages of the chunk's database like every other write.
     */
    private boolean giveBackWrite(
            Claimed c, String what, boolean once, org.jdbi.v3.core.HandleCallback<Boolean, RuntimeException> write) {
        if (once) {
            return LocalTransactions.inTransaction(placements.jdbi(c.placement()), what, write);
        }
        return waits.await(
                Service.DATABASE,
                c.placement(),
                attempt -> LocalTransactions.inTransaction(placements.jdbi(c.placement()), what, write));
    }

    /** The back-off before a chunk's next attempt after {@code attempts} attempts, the last of which failed. */
    private Duration backoff(int attempts) {
        return options.chunkRetry().backoffBound(Math.max(1, attempts) + 1);
    }

    static boolean isDamage(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof VigiloException v && v.kind() == ErrorKind.DAMAGED) {
                return true;
            }
        }
        return false;
    }

    private static boolean isCancellation(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof CancelledException || t instanceof InterruptedException) {
                return true;
            }
        }
        return false;
    }

    /** Interrupts a held chunk whose run was paused by an interrupting pause; it is given back, its attempt refunded. */
    private static void interrupt(Held h) {
        h.interrupted().set(true);
        h.future().cancel(true);
    }

    /**
     * Runs on the heartbeat thread: renews held leases; interrupts chunks whose lease was lost or run stopped, and gives
     * back those whose run was paused by an interrupting pause ({@code pause --now}, a budget that ran out). A
     * database that is out is noted by its probe (logged once per outage); the other leases on it wait for the next
     * beat, and a chunk executing meanwhile keeps its lease unless another worker takes it over after it expired
     * (its completion is then fenced).
     */
    private void heartbeat() {
        try {
            List<UUID> runs = new ArrayList<>();
            Set<String> out = new HashSet<>();
            int renewed = 0;
            int holding = 0;
            for (Held h : held.values()) {
                holding++;
                runs.add(h.lease().runId());
                if (out.contains(h.placement())) {
                    continue;
                }
                OutageWaits.Probe probe =
                        heartbeatProbes.computeIfAbsent(h.placement(), a -> waits.probe(Service.DATABASE, a));
                boolean mine;
                try {
                    mine = LocalTransactions.inTransaction(
                            placements.jdbi(h.placement()),
                            "lease renewal",
                            tx -> ChunkTables.renew(tx, h.lease(), options.lease()));
                    probe.answered();
                } catch (RuntimeException e) {
                    if (probe.failed(e)) {
                        out.add(h.placement());
                    } else {
                        LOG.warn(
                                "cannot renew the lease of chunk {} of run {}: {}",
                                h.lease().chunkIndex(),
                                h.lease().runId(),
                                e.getMessage());
                    }
                    continue;
                }
                if (!mine) {
                    h.lost().set(true);
                    h.future().cancel(true);
                } else {
                    renewed++;
                }
            }
            listener.heartbeat(holding, renewed);
            budgets.heartbeat(new HashSet<>(runs));
            List<UUID> stopped;
            List<UUID> interrupted;
            try {
                List<UUID> distinct = runs.stream().distinct().toList();
                stopped = ShardRoutes.stopped(placements.control(), distinct);
                interrupted = ShardRoutes.interrupted(placements.control(), distinct);
                heartbeatControlProbe.answered();
            } catch (RuntimeException e) {
                if (!heartbeatControlProbe.failed(e)) {
                    LOG.warn("heartbeat cannot read which runs stopped: {}", e.getMessage());
                }
                return;
            }
            for (Held h : held.values()) {
                if (stopped.contains(h.lease().runId())) {
                    h.future().cancel(true);
                } else if (interrupted.contains(h.lease().runId())) {
                    interrupt(h);
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("heartbeat failed: {}", e.getMessage());
        }
    }
}
