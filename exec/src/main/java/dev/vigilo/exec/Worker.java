package dev.vigilo.exec;

import dev.vigilo.agent.AgentEnvironment;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ErrorKind;
import dev.vigilo.common.errors.VigiloException;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code vigilo worker}: claims chunk leases of dispatchable runs, executes their cases and completes each chunk with
 * its receipt under the lease (docs/execution.md, "Workers"). Also coordinates: resumes requested admissions whose
 * creator is gone and settles runs whose chunks all ended.
 *
 * <p>Threads: the thread calling {@link #run} claims chunks and coordinates; a pool of {@code concurrency} threads
 * executes claimed chunks (each chunk's cases go to a shared case pool of the same size, so at most
 * {@code concurrency} cases run at once); one heartbeat thread renews every held lease and interrupts the execution
 * of a chunk whose lease was lost or whose run stopped. {@link #stop} may be called from any thread (a signal
 * handler): it stops claiming, interrupts running agents and gives held chunks back.
 */
public final class Worker {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);

    /**
     * @param concurrency  cases (and chunks) executed at once, 1..256
     * @param exitWhenIdle return from {@link #run} once no run has work left that this worker could do
     * @param lease        a chunk lease's length
     * @param heartbeat    how often held leases are renewed (well below {@code lease})
     * @param poll         how long to wait before looking for work again when none was found
     * @param coordination how often to look for admissions to resume and runs to settle
     * @param creationLease the creation lease a resumed admission holds (5 minutes; tests shorten it)
     */
    public record Options(
            int concurrency,
            boolean exitWhenIdle,
            Duration lease,
            Duration heartbeat,
            Duration poll,
            Duration coordination,
            Duration creationLease) {
        public Options {
            if (concurrency < 1 || concurrency > 256) {
                throw new IllegalArgumentException("concurrency must be in 1..256, got " + concurrency);
            }
            Objects.requireNonNull(lease, "lease");
            Objects.requireNonNull(heartbeat, "heartbeat");
            Objects.requireNonNull(poll, "poll");
            Objects.requireNonNull(coordination, "coordination");
            Objects.requireNonNull(creationLease, "creationLease");
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

    /** What a worker did, for its exit summary and metrics. */
    public record Report(
            long chunksCompleted,
            long casesExecuted,
            long chunksRequeued,
            long chunksFailed,
            long chunksFenced,
            long admissions,
            long settlements) {}

    /**
     * Receives progress from the worker's threads (implementations must be thread-safe and quick: they run on the
     * claiming, chunk and heartbeat threads). Metrics are kept through it.
     */
    public interface Listener {
        /** A chunk lease was claimed. */
        default void chunkClaimed(UUID runId, long chunkIndex) {}

        /** A chunk was completed with its receipt under the lease. */
        default void chunkCompleted(UUID runId, long chunkIndex, int cases) {}

        /**
         * One case of a completed chunk, as its receipt records it: the agent's wall time over its attempts and
         * whether it ended in an error. Called after {@link #chunkCompleted}, once per case.
         */
        default void caseExecuted(UUID runId, Duration agentTime, boolean errored) {}

        /** A chunk was given back (requeued), failed, or dropped because the lease was lost. */
        default void chunkGivenBack(UUID runId, long chunkIndex, String outcome) {}

        /** One heartbeat renewed {@code renewed} of the {@code held} leases. */
        default void heartbeat(int held, int renewed) {}

        default void runSettled(UUID runId, String status) {}

        Listener NONE = new Listener() {};
    }

    private final Placements placements;
    private final Options options;
    private final Listener listener;
    private final RunContexts contexts;
    private final ChunkExecutor executor;
    private final Coordinator coordinator;
    private final UUID id = UUID.randomUUID();
    private final Map<String, Held> held = new ConcurrentHashMap<>();
    private final Set<UUID> markedRunning = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final Semaphore wake = new Semaphore(0);
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong cases = new AtomicLong();
    private final AtomicLong requeued = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong fenced = new AtomicLong();
    private volatile Thread runner;

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
        this.placements = Objects.requireNonNull(placements, "placements");
        this.options = Objects.requireNonNull(options, "options");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.contexts = new RunContexts(placements, storage);
        this.executor = new ChunkExecution(options.concurrency(), agentEnvironment);
        this.coordinator = new Coordinator(placements, storage, options.creationLease(), listener);
    }

    /** This worker's id: the lease owner recorded on the chunks it holds. */
    public UUID id() {
        return id;
    }

    /** One claimed chunk being executed. */
    private record Held(String placement, ChunkTables.Lease lease, Future<?> future, AtomicBoolean lost) {}

    /**
     * Claims and executes chunks until {@link #stop} is called (or, with {@code exitWhenIdle}, until no work is
     * left), then gives back what it holds and returns.
     */
    public Report run() {
        runner = Thread.currentThread();
        ExecutorService chunks = Executors.newFixedThreadPool(options.concurrency(), named("vigilo-chunk"));
        ScheduledExecutorService heartbeat = Executors.newSingleThreadScheduledExecutor(named("vigilo-heartbeat"));
        long beat = options.heartbeat().toMillis();
        heartbeat.scheduleWithFixedDelay(this::heartbeat, beat, beat, TimeUnit.MILLISECONDS);
        long lastCoordination = System.nanoTime();
        long nextCoordination = lastCoordination;
        try {
            while (!stopping.get() && !Thread.currentThread().isInterrupted()) {
                long now = System.nanoTime();
                // A chunk that just ended may complete its run: settle it after one poll interval rather than at
                // the next scheduled round, so a run's verdict (and --exit-when-idle) follows its last chunk.
                boolean settleDue = coordinator.settlementRequested()
                        && now - lastCoordination >= options.poll().toNanos();
                if (now - nextCoordination >= 0 || settleDue) {
                    coordinator.coordinate();
                    lastCoordination = System.nanoTime();
                    nextCoordination = lastCoordination + options.coordination().toNanos();
                }
                if (held.size() < options.concurrency()) {
                    Optional<Claimed> c = claimOne();
                    if (c.isPresent()) {
                        start(chunks, c.get());
                        continue;
                    }
                }
                if (options.exitWhenIdle() && held.isEmpty() && idle()) {
                    break;
                }
                wake.drainPermits();
                wake.tryAcquire(options.poll().toMillis(), TimeUnit.MILLISECONDS);
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
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            heartbeat.shutdownNow();
            executor.close();
            contexts.close();
        }
        return new Report(
                completed.get(),
                cases.get(),
                requeued.get(),
                failed.get(),
                fenced.get(),
                coordinator.admissions(),
                coordinator.settlements());
    }

    /** Stops claiming and gives held chunks back; {@link #run} returns soon after. Callable from any thread. */
    public void stop() {
        stopping.set(true);
        held.values().forEach(h -> h.future().cancel(true));
        wake.release();
    }

    private record Claimed(String placement, ChunkTables.Lease lease) {}

    private Optional<Claimed> claimOne() {
        Map<String, List<ChunkTables.Claimable>> routes;
        try {
            routes = Routes.claimable(placements.control());
        } catch (RuntimeException e) {
            LOG.warn("cannot read dispatchable runs from the control database: {}", e.getMessage());
            return Optional.empty();
        }
        for (var entry : routes.entrySet()) {
            String alias = entry.getKey();
            if (!placements.has(alias)) {
                continue;
            }
            try {
                Optional<ChunkTables.Lease> lease = LocalTransactions.inTransaction(
                        placements.jdbi(alias),
                        "claim in execution database \"" + alias + "\"",
                        h -> ChunkTables.claim(h, entry.getValue(), id, options.lease()));
                if (lease.isPresent()) {
                    UUID run = lease.get().runId();
                    if (markedRunning.add(run)) {
                        Routes.markRunning(placements.control(), run);
                    }
                    listener.chunkClaimed(run, lease.get().chunkIndex());
                    return Optional.of(new Claimed(alias, lease.get()));
                }
            } catch (RuntimeException e) {
                LOG.warn("cannot claim from execution database \"{}\": {}", alias, e.getMessage());
            }
        }
        return Optional.empty();
    }

    /**
     * Whether no unfinished run has work this worker could do. A run whose execution databases this worker all
     * reaches keeps it busy until the run ends (it may admit, claim, or settle it). A run it reaches only in part keeps
     * it busy while a reached database still holds queued or leased chunks of the run; admission and settlement of
     * such a run are left to workers that reach all of it. A run it reaches nowhere is not its work.
     */
    private boolean idle() {
        try {
            for (var run : Routes.unfinished(placements.control()).entrySet()) {
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
        String key = c.lease().runId() + "/" + c.lease().chunkIndex();
        FutureTask<Void> task = new FutureTask<>(
                () -> {
                    try {
                        execute(c, lost);
                    } finally {
                        held.remove(key);
                        wake.release();
                    }
                },
                null);
        // Registered before it runs, so the heartbeat covers the lease from the start.
        held.put(key, new Held(c.placement(), c.lease(), task, lost));
        pool.execute(task);
    }

    /** Runs on a chunk thread: execute, write the receipt, complete; on failure requeue or fail under the lease. */
    private void execute(Claimed c, AtomicBoolean lost) {
        ChunkTables.Lease lease = c.lease();
        String what = "chunk " + lease.chunkIndex() + " of run " + lease.runId();
        try {
            RunContext ctx = contexts.get(lease.runId(), c.placement());
            Receipt receipt = executor.execute(lease, id, ctx);
            ObjectRef ref = ctx.store()
                    .create(
                            Receipt.key(lease.runId(), lease.chunkIndex(), lease.generation()),
                            receipt.encode(),
                            Deadline.after(Duration.ofSeconds(120)));
            ChunkTables.Completion outcome = LocalTransactions.inTransaction(
                    placements.jdbi(c.placement()),
                    "completion of " + what,
                    h -> ChunkTables.complete(h, lease, ref, tallies(receipt)));
            switch (outcome) {
                case COMPLETED -> {
                    completed.incrementAndGet();
                    cases.addAndGet(receipt.cases().size());
                    listener.chunkCompleted(
                            lease.runId(), lease.chunkIndex(), receipt.cases().size());
                    for (Receipt.CaseResult rc : receipt.cases()) {
                        listener.caseExecuted(lease.runId(), Duration.ofMillis(rc.agentMillis()), rc.errored());
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
            giveBack(c, lost, what, e);
        }
    }

    private void giveBack(Claimed c, AtomicBoolean lost, String what, RuntimeException e) {
        ChunkTables.Lease lease = c.lease();
        if (lost.get()) {
            fenced.incrementAndGet();
            listener.chunkGivenBack(lease.runId(), lease.chunkIndex(), "fenced");
            LOG.info("{}: lease lost while executing; dropped", what);
            return;
        }
        boolean cancelled = stopping.get() || Thread.currentThread().isInterrupted() || isCancellation(e);
        Thread.interrupted(); // the database writes below must not be aborted by our own interrupt
        String message = LocalTransactions.rootMessage(e);
        try {
            if (!cancelled && isDamage(e)) {
                boolean mine = LocalTransactions.inTransaction(
                        placements.jdbi(c.placement()),
                        "failing " + what,
                        h -> ChunkTables.fail(h, lease, e.getMessage()));
                if (mine) {
                    failed.incrementAndGet();
                    listener.chunkGivenBack(lease.runId(), lease.chunkIndex(), "failed");
                    LOG.warn("{} failed: {}", what, e.getMessage());
                    coordinator.settleSoon(lease.runId());
                }
                return;
            }
            Duration backoff = cancelled ? Duration.ZERO : backoff(lease.attempts());
            boolean mine = LocalTransactions.inTransaction(
                    placements.jdbi(c.placement()),
                    "requeue of " + what,
                    h -> ChunkTables.requeue(h, lease, backoff, cancelled ? "worker stopped" : message));
            if (mine) {
                requeued.incrementAndGet();
                listener.chunkGivenBack(lease.runId(), lease.chunkIndex(), "requeued");
                if (!cancelled) {
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

    static Duration backoff(int attempts) {
        long seconds = Math.min(60, 1L << Math.min(6, Math.max(0, attempts - 1)));
        return Duration.ofSeconds(seconds);
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

    static ChunkTables.Tallies tallies(Receipt r) {
        List<Receipt.GateTally> t = r.tallies();
        long[] p = new long[t.size()];
        long[] f = new long[t.size()];
        long[] e = new long[t.size()];
        for (int i = 0; i < t.size(); i++) {
            p[i] = t.get(i).passed();
            f[i] = t.get(i).failed();
            e[i] = t.get(i).errored();
        }
        return new ChunkTables.Tallies(r.cases().size(), (int) r.casesErrored(), p, f, e);
    }

    /** Runs on the heartbeat thread: renews held leases; interrupts chunks whose lease was lost or run stopped. */
    private void heartbeat() {
        try {
            List<UUID> runs = new ArrayList<>();
            int renewed = 0;
            int holding = 0;
            for (Held h : held.values()) {
                holding++;
                runs.add(h.lease().runId());
                boolean mine;
                try {
                    mine = LocalTransactions.inTransaction(
                            placements.jdbi(h.placement()),
                            "lease renewal",
                            tx -> ChunkTables.renew(tx, h.lease(), options.lease()));
                } catch (RuntimeException e) {
                    LOG.warn(
                            "cannot renew the lease of chunk {} of run {}: {}",
                            h.lease().chunkIndex(),
                            h.lease().runId(),
                            e.getMessage());
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
            List<UUID> stopped = Routes.stopped(
                    placements.control(), runs.stream().distinct().toList());
            for (Held h : held.values()) {
                if (stopped.contains(h.lease().runId())) {
                    h.future().cancel(true);
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("heartbeat failed: {}", e.getMessage());
        }
    }

    private static java.util.concurrent.ThreadFactory named(String prefix) {
        AtomicLong n = new AtomicLong();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
