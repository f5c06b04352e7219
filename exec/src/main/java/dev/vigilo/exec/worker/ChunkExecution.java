package dev.vigilo.exec.worker;

import dev.vigilo.agent.Agent;
import dev.vigilo.agent.AgentCall;
import dev.vigilo.agent.AgentEnvironment;
import dev.vigilo.agent.AgentErrorType;
import dev.vigilo.agent.AgentOutcome;
import dev.vigilo.agent.Agents;
import dev.vigilo.agent.CaseBudget;
import dev.vigilo.agent.CaseRecord;
import dev.vigilo.agent.EndpointLimiters;
import dev.vigilo.agent.EvaluationContext;
import dev.vigilo.agent.EvaluatorResult;
import dev.vigilo.agent.EvaluatorSet;
import dev.vigilo.agent.Evaluators;
import dev.vigilo.agent.TokenUsage;
import dev.vigilo.agent.sandbox.KeptFile;
import dev.vigilo.agent.sandbox.SandboxAttempt;
import dev.vigilo.agent.sandbox.SandboxSettings;
import dev.vigilo.agent.sandbox.Sandboxes;
import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.dataset.StoredCase;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.ChunkSeed;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.EpochReduction;
import dev.vigilo.exec.record.PartialChain;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.ReceiptParser;
import dev.vigilo.exec.record.TranscriptStore;
import dev.vigilo.llm.ChatLimiter;
import dev.vigilo.llm.Pricing;
import dev.vigilo.plan.ChunkFile;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's {@link ChunkExecutor}: reads and verifies the claimed chunk file against its scheduling row, reads
 * and verifies the chunk's cases ({@link ChunkCases}: only the dataset ranges the chunk covers, whole case files
 * checked, membership digest reproduced before any case runs), then runs the agent and exactly the evaluators of
 * each case's mask on a case pool shared by every chunk of the worker, and assembles the receipt. The agent and the
 * evaluators run with the run's secrets ({@link AgentEnvironment#forRun}), so what they hand on, and so every
 * transcript, receipt and output written from it, has them masked. Every attempt of a
 * case's agent call is recorded as a transcript under the chunk's lease generation ({@link TranscriptRecorder},
 * docs/transcripts.md) and referenced from the case's receipt entry. A chunk queued again by {@code vigilo run
 * rerun-errors} (its lease names a previous receipt) runs only that receipt's errored executions, carries the other
 * case entries (and epochs) forward unchanged, and records in the receipt's {@code rerun} what it ran and the usage of
 * what it replaced (docs/execution.md, "Rerun errors"). While it runs, finished case entries are written as partial
 * receipts ({@link PartialWriter}); a chunk whose row references an earlier holder's partial receipt chain carries the
 * chain's entries forward and runs only its other cases, writing a version 7 receipt (docs/execution.md, "Resume from
 * partial receipts"); a chain that does not verify is logged and the chunk executed whole.
 *
 * <p>Bounds (docs/execution.md, "Calls in flight"): at most {@code concurrency} executions are in flight in the
 * worker (a worker-wide semaphore the chunk threads take a slot of before they start one); a chunk keeps at most
 * {@link ChunkCases#DEFAULT_RESIDENT_BYTES} of case bytes in flight. An execution holds no thread while its agent
 * waits for a model ({@link Agent#start}): the short steps (answers, evaluators that do not block, transcripts,
 * receipt entries) run on a fixed pool of {@link #WORK_THREADS} threads, and what blocks (command agents, agents
 * with tools, the answer cache, judges and command evaluators, sandboxed executions) on a bounded pool of
 * {@code processes} threads, so threads do not grow with the calls in flight. Interruption cancels the chunk's
 * running cases (agents' child processes are killed, requests aborted) and ends with {@link CancelledException}.
 * Thread-safe.
 */
final class ChunkExecution implements ChunkExecutor {
    private static final Logger LOG = LoggerFactory.getLogger(ChunkExecution.class);
    private static final Duration READ = Duration.ofSeconds(120);

    /**
     * The short steps of every execution: 32 threads, whatever the concurrency (the system property {@code
     * vigilo.worker.workThreads} sets another number, for measurements). Not the cores alone: the steps also wait for
     * the object store (each transcript and partial receipt link is a create with fsync, 5-50 ms on a busy disk), so
     * a pool of 2 on a 2-core machine held 1,024 calls' answers in its queue and reached 6% of the latency bound
     * (docs/benchmarks.md, "Calls in flight").
     */
    static final int WORK_THREADS = Math.max(1, Integer.getInteger("vigilo.worker.workThreads", 32));
    /** The default bound of the blocking pool (command agents' processes, agents with tools, judges). */
    static final int DEFAULT_PROCESSES = 256;

    /** The executions in flight in the worker, at most {@code concurrency}. */
    private final Semaphore slots;

    /** See {@link #WORK_THREADS}. */
    private final ExecutorService work;
    /** What blocks a thread, at most {@code processes} at once; idle threads end after a while. */
    private final ThreadPoolExecutor blocking;
    /** See {@link #flushPartialsAfter}; read by the chunk threads after the worker set it. */
    private volatile Optional<Duration> partialFlush = Optional.of(Worker.Options.DEFAULT_PARTIAL_FLUSH);

    private final AgentEnvironment environment;
    private final Map<UUID, RunAgent> agents = new HashMap<>();
    /** The worker's sandbox root, set when the worker starts; null until then (a run with a sandbox then fails). */
    private volatile Sandboxes sandboxes;
    /** The worker's fleet limiters, set when the worker starts; null: model calls are not limited. */
    private volatile FleetLimiters fleet;

    private final TranscriptStore transcripts = new TranscriptStore();
    /**
     * Each transcript as its own object, as receipt versions 2-7 reference them (system property {@code
     * vigilo.worker.transcriptObjects}): the path before transcript containers, kept so that a benchmark can compare
     * both in one build (docs/benchmarks.md, "Worker CPU per case") and tests can write runs as older builds did.
     * Read when the execution is built.
     */
    static final String TRANSCRIPT_OBJECTS = "vigilo.worker.transcriptObjects";

    private final boolean transcriptObjects = Boolean.getBoolean(TRANSCRIPT_OBJECTS);
    /** One thread writing the partial receipts whose entries waited a second (docs/execution.md). */
    private final ScheduledExecutorService flushes =
            Executors.newSingleThreadScheduledExecutor(Threads.daemonFactory("partial-flush"));

    /**
     * The agent and evaluators of one run, built once per worker, and what its transcripts name as the model's
     * provider and default model.
     */
    private record RunAgent(
            Agent agent,
            EvaluatorSet evaluators,
            EpochReduction reduction,
            Pricing pricing,
            Function<List<TokenUsage>, Optional<BigDecimal>> cost,
            CaseBudget budget,
            String provider,
            String defaultModel,
            SandboxSettings sandbox,
            boolean evaluatorsBlock) {}

    /**
     * Whether a run's evaluators hold a thread (a command evaluator's process): then they run on the blocking pool.
     * Judges and panels wait for their models without one ({@link EvaluatorSet#evaluateAsync}).
     */
    private static boolean blocks(EvaluatorSet evaluators) {
        return !evaluators.waitsWithoutThreads();
    }

    ChunkExecution(int concurrency) {
        this(concurrency, AgentEnvironment.system());
    }

    ChunkExecution(int concurrency, AgentEnvironment environment) {
        this(concurrency, Math.min(concurrency, DEFAULT_PROCESSES), environment);
    }

    /**
     * @param concurrency executions in flight at once in the worker
     * @param processes   the blocking pool's threads: command agents' processes, calls of agents with tools, judges
     *                    and command evaluators run at most this many at once (the others queue)
     */
    ChunkExecution(int concurrency, int processes, AgentEnvironment environment) {
        if (concurrency < 1 || processes < 1) {
            throw new IllegalArgumentException(
                    "concurrency and processes must be at least 1, got " + concurrency + " and " + processes);
        }
        this.slots = new Semaphore(concurrency);
        this.work = Executors.newFixedThreadPool(WORK_THREADS, Threads.daemonFactory("case-work"));
        int threads = Math.min(concurrency, processes);
        this.blocking = new ThreadPoolExecutor(
                threads, threads, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), Threads.daemonFactory("case"));
        this.blocking.allowCoreThreadTimeOut(true);
        this.environment = environment;
    }

    /**
     * The longest a finished case entry waits for its partial receipt link ({@link Worker.Options#partialFlush});
     * empty: links per full batch only. Set before the first chunk.
     */
    @Override
    public void flushPartialsAfter(Optional<Duration> partialFlush) {
        this.partialFlush = Objects.requireNonNull(partialFlush, "partialFlush");
    }

    /**
     * The {@link ChatLimiter} of a run's budget on this worker, asked once per run when its agent is built ({@link
     * RunBudgets}); it governs every model call of the run, whatever the endpoint.
     */
    interface Budgets {
        ChatLimiter of(RunContext run, Pricing pricing);
    }

    private volatile Budgets budgets = (run, pricing) -> ChatLimiter.NONE;

    /** Where every run's model calls get their budget (the worker sets it before it claims). */
    @Override
    public void useBudgets(Budgets b) {
        this.budgets = b;
    }

    @Override
    public void useLimiters(FleetLimiters limiters) {
        this.fleet = limiters;
    }

    /**
     * What governs the model calls of {@code run}'s agent and judges: the fleet's rate limits and circuit breakers
     * (docs/execution.md, "Fleet rate limit"), then the run's budget (docs/execution.md, "Budget"), which every
     * endpoint of the run shares.
     */
    private EndpointLimiters limiters(RunContext run, Pricing pricing) {
        List<EndpointLimiters> sources = new ArrayList<>();
        FleetLimiters f = fleet;
        if (f != null) {
            sources.add(f.forRun(run.runId()));
        }
        ChatLimiter budget = budgets.of(run, pricing);
        sources.add(endpoint -> budget);
        return EndpointLimiters.all(sources);
    }

    /** Where the cases of runs with a sandbox get their attempt directories (docs/formats/agent-protocol.md). */
    @Override
    public void useSandboxes(Sandboxes root) {
        this.sandboxes = root;
    }

    /**
     * The run's sandbox settings, checked against this worker: a run whose sandbox this worker cannot provide (no
     * bwrap or podman on its PATH, no way to enforce limits, no workdir) fails the chunk's attempt with one clear
     * message, before any case runs; it is not an error of every case. Invalid input, not unavailable: an outage
     * would be waited out without counting attempts, and a missing program does not come back by itself.
     */
    private SandboxSettings sandbox(RunContext run) {
        SandboxSettings settings;
        try {
            settings = SandboxSettings.fromConfig(
                    run.configuration().path("profile").get("sandbox"), environment.workingDirectory());
        } catch (RuntimeException e) {
            throw new DamagedException(
                    "run " + run.runId() + ": the frozen profile's sandbox is invalid: " + e.getMessage());
        }
        if (settings.sandboxed()) {
            Sandboxes root = sandboxes;
            if (root == null) {
                throw new InvalidInputException("run " + run.runId() + " runs its commands in a "
                        + settings.kind().wire() + " sandbox, and this executor has no sandbox root");
            }
            root.problem(settings).ifPresent(p -> {
                throw new InvalidInputException("run " + run.runId() + " cannot run on this worker: " + p);
            });
        }
        return settings;
    }

    private RunAgent agentOf(RunContext run) {
        SandboxSettings sandbox = sandbox(run);
        synchronized (agents) {
            return agents.computeIfAbsent(run.runId(), id -> {
                var agent = run.configuration().path("agent");
                boolean http = "http".equals(agent.path("kind").asText());
                String model = http
                        ? agent.path("model").asText("model")
                        : Path.of(agent.path("command").path(0).asText("agent"))
                                .getFileName()
                                .toString();
                // The run's secrets (the values of its configuration's *_env keys) are masked in everything the
                // agent and the evaluators hand on, so no transcript, receipt or message below can hold one.
                Pricing pricing = pricing(run);
                AgentEnvironment runEnvironment = environment
                        .forRun(run.configuration())
                        .withAnswers(new StoreAnswerCache(run.store()))
                        .withLimiters(limiters(run, pricing));
                // The one pricing of an agent call's tokens: for the cost evaluator and for limits.case_cost_usd.
                Function<List<TokenUsage>, Optional<BigDecimal>> cost =
                        used -> Receipt.Usage.of(used, List.of(), pricing).costUsd();
                EvaluatorSet evaluators =
                        Evaluators.fromPlan(run.configuration().path("evaluator_plan"), runEnvironment);
                return new RunAgent(
                        Agents.create(agent, runEnvironment),
                        evaluators,
                        EpochReduction.of(run.configuration()),
                        pricing,
                        cost,
                        budget(run, cost),
                        http ? AttemptTranscript.HTTP_PROVIDER : AttemptTranscript.COMMAND_PROVIDER,
                        model.isEmpty() ? "agent" : model,
                        sandbox,
                        blocks(evaluators));
            });
        }
    }

    private static Pricing pricing(RunContext run) {
        try {
            return Pricing.fromJson(run.configuration().path("profile").path("pricing"));
        } catch (IllegalArgumentException e) {
            throw new DamagedException(
                    "run " + run.runId() + ": the frozen profile's pricing is invalid: " + e.getMessage());
        }
    }

    /**
     * The run's per-case limits from its frozen profile's {@code limits} (docs/formats/plan-profile.md), the cost of
     * calls priced by {@code cost}.
     */
    private static CaseBudget budget(RunContext run, Function<List<TokenUsage>, Optional<BigDecimal>> cost) {
        var limits = run.configuration().path("profile").path("limits");
        Optional<Duration> time = limits.has("case_seconds")
                ? Optional.of(Duration.ofSeconds(limits.path("case_seconds").asLong()))
                : Optional.empty();
        Optional<Long> tokens = limits.has("case_tokens")
                ? Optional.of(limits.path("case_tokens").asLong())
                : Optional.empty();
        Optional<BigDecimal> maxCost = limits.has("case_cost_usd")
                ? Optional.of(new BigDecimal(limits.path("case_cost_usd").asText()))
                : Optional.empty();
        if (time.isEmpty() && tokens.isEmpty() && maxCost.isEmpty()) {
            return CaseBudget.NONE;
        }
        return new CaseBudget(time, tokens, maxCost, cost);
    }

    @Override
    public Receipt execute(ChunkTables.Lease lease, UUID worker, RunContext run, PartialLink link) {
        Instant started = Instant.now();
        ChunkSeed seed = lease.seed();
        ChunkFile chunk = PublishedPlan.readChunk(
                run.runId(),
                new PublishedPlan.ChunkRef(seed.chunkIndex(), seed.file(), seed.firstOrdinal(), seed.caseCount()),
                run.reader(),
                Deadline.after(READ));
        if (!chunk.chunkId().equals(seed.chunkId()) || !chunk.membership().equals(seed.membership())) {
            throw new DamagedException("chunk " + seed.chunkIndex() + " of run " + run.runId()
                    + ": the chunk file's identity differs from its scheduling row");
        }
        List<ChunkMembership.Case> listed = new ArrayList<>();
        for (ChunkFile.Entry e : chunk.cases()) {
            listed.add(new ChunkMembership.Case(e.ordinal(), e.id(), e.sha256()));
        }
        ChunkMembership membership =
                new ChunkMembership(chunk.chunkIndex(), chunk.chunkId(), listed, chunk.membership());
        ChunkCases verified = ChunkCases.open(membership, run.datasetReader(), ChunkCases.DEFAULT_RESIDENT_BYTES);
        RunAgent ra = agentOf(run);
        Optional<TranscriptContainers> containers = transcriptObjects
                ? Optional.empty()
                : Optional.of(
                        new TranscriptContainers(run.store(), run.runId(), seed.chunkIndex(), lease.generation()));
        TranscriptRecorder.Scope scope = new TranscriptRecorder.Scope(
                run, seed.chunkIndex(), lease.generation(), ra.provider(), ra.defaultModel(), containers);
        Semaphore inFlight = new Semaphore((int) Math.min(Integer.MAX_VALUE, ChunkCases.DEFAULT_RESIDENT_BYTES));
        int epochs = ra.reduction().policy().count();
        // Per case, one future per epoch: the epochs of a case run side by side on the case pool like cases do, so a
        // small dataset of many epochs keeps the pool as busy as a large one. The case's bytes are charged once and
        // released when its last epoch ends.
        Optional<Receipt> previous = lease.rerun()
                .flatMap(ChunkTables.Rerun::previous)
                .map(ref -> previousReceipt(run, seed, ref, chunk.cases().size()));
        // Per case, the executions to run: every epoch on a first execution (or a failed chunk executed again whole);
        // on a rerun only the errored executions of the previous receipt (docs/execution.md, "Rerun errors").
        List<List<Integer>> planned = new ArrayList<>();
        for (int i = 0; i < chunk.cases().size(); i++) {
            planned.add(executionsToRun(previous.map(p -> p.cases()).orElse(null), i, epochs));
        }
        // A resumed chunk (its row references a partial receipt chain of an earlier holder) carries the chain's
        // entries forward and executes only the other cases (docs/execution.md, "Resume from partial receipts").
        int settlementGeneration =
                lease.rerun().map(ChunkTables.Rerun::generation).orElse(1);
        Optional<PartialChain.Chain> carried =
                lease.partial().flatMap(p -> carriedChain(run, lease, chunk, p, settlementGeneration, epochs, planned));
        List<List<Integer>> toRun = new ArrayList<>();
        for (int i = 0; i < chunk.cases().size(); i++) {
            boolean done = carried.isPresent()
                    && carried.get().entries().containsKey(chunk.cases().get(i).ordinal());
            toRun.add(done ? List.of() : planned.get(i));
        }
        PartialWriter partials = link == PartialLink.NONE
                ? null
                : new PartialWriter(
                        run, lease, worker, settlementGeneration, epochs, carried, link, partialFlush, containers);
        ScheduledFuture<?> ticker = partials == null || partialFlush.isEmpty()
                ? null
                : flushes.scheduleWithFixedDelay(
                        () -> tick(partials, seed), TICK.toMillis(), TICK.toMillis(), TimeUnit.MILLISECONDS);
        List<List<CompletableFuture<Receipt.CaseResult>>> futures = new ArrayList<>();
        try {
            int[] position = {0};
            verified.forEach(c -> {
                int index = position[0]++;
                ChunkFile.Entry entry = chunk.cases().get(index);
                List<Integer> runs = toRun.get(index);
                List<CompletableFuture<Receipt.CaseResult>> perCase = new ArrayList<>(runs.size());
                if (runs.isEmpty()) {
                    futures.add(perCase); // carried forward: nothing runs, no bytes are held
                    return;
                }
                int charge = (int) Math.min(c.caseJson().length, ChunkCases.DEFAULT_RESIDENT_BYTES);
                try {
                    inFlight.acquire(charge);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new CancelledException("chunk " + seed.chunkIndex() + " was cancelled");
                }
                AtomicInteger running = new AtomicInteger(runs.size());
                AtomicInteger finished = new AtomicInteger();
                Receipt.CaseResult before =
                        previous.isPresent() ? previous.get().cases().get(index) : null;
                Receipt.CaseResult[] ran = new Receipt.CaseResult[runs.size()];
                for (int k = 0; k < runs.size(); k++) {
                    int e = runs.get(k);
                    int slot = k;
                    int epoch = epochs > 1 ? e : 0; // a run of one epoch names none, as before epochs existed
                    // A worker-wide slot per execution in flight, taken here (the chunk thread waits for one)
                    // and given back when the execution ended, its entry handed to the partial receipts.
                    try {
                        slots.acquire();
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        throw new CancelledException("chunk " + seed.chunkIndex() + " was cancelled");
                    }
                    CompletableFuture<Receipt.CaseResult> f;
                    try {
                        f = startCase(run, ra, scope, c, entry, epoch, x -> {
                            ran[slot] = x;
                            // The case's last execution hands the whole entry to the partial receipts, holding its
                            // case slot until the entry is accepted (at most 16 wait unreferenced).
                            if (finished.incrementAndGet() == runs.size() && partials != null) {
                                partials.finished(assemble(ra, before, runs, List.of(ran), epochs));
                            }
                        });
                    } catch (RuntimeException | Error failure) {
                        slots.release(); // a worker-wide slot must not leak with the failed chunk
                        throw failure;
                    }
                    f.whenComplete((x, t) -> {
                        slots.release();
                        if (running.decrementAndGet() == 0) {
                            inFlight.release(charge);
                        }
                    });
                    perCase.add(f);
                }
                futures.add(perCase);
            });
            List<Receipt.CaseResult> results = new ArrayList<>(futures.size());
            for (int i = 0; i < futures.size(); i++) {
                List<CompletableFuture<Receipt.CaseResult>> perCase = futures.get(i);
                Receipt.CaseResult before =
                        previous.isPresent() ? previous.get().cases().get(i) : null;
                long ordinal = chunk.cases().get(i).ordinal();
                if (carried.isPresent() && carried.get().entries().containsKey(ordinal)) {
                    results.add(carried.get().entries().get(ordinal).result());
                    continue;
                }
                if (perCase.isEmpty()) {
                    results.add(before);
                    continue;
                }
                List<Receipt.CaseResult> ran = new ArrayList<>(perCase.size());
                for (CompletableFuture<Receipt.CaseResult> f : perCase) {
                    ran.add(f.get());
                }
                results.add(assemble(ra, before, toRun.get(i), ran, epochs));
            }
            Optional<Receipt.Rerun> rerun = lease.rerun().map(r -> rerunOf(r, previous, planned, results, epochs));
            Optional<Receipt.Resumed> resumed = carried.map(ch -> new Receipt.Resumed(
                    ch.head(),
                    ch.entries().values().stream()
                            .map(x -> new Receipt.Carried(x.result().ordinal(), x.generation()))
                            .toList()));
            Receipt receipt = new Receipt(
                    run.runId(),
                    seed.chunkIndex(),
                    seed.chunkId(),
                    seed.shard(),
                    lease.generation(),
                    worker,
                    seed.membership(),
                    started,
                    Instant.now(),
                    run.evaluatorNames(),
                    run.gateNames(),
                    results,
                    rerun,
                    resumed);
            // Whatever transcripts no link's flush wrote: before the receipt that references them.
            containers.ifPresent(TranscriptContainers::flush);
            return receipt;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancelledException("chunk " + seed.chunkIndex() + " of run " + run.runId() + " was cancelled");
        } catch (ExecutionException e) {
            throw Futures.unwrap(e);
        } finally {
            if (ticker != null) {
                ticker.cancel(false);
                partials.stop();
            }
            futures.forEach(perCase -> perCase.forEach(f -> f.cancel(true)));
        }
    }

    /** How often the flush ticker looks for partial receipt entries that waited their longest ({@link #partialFlush}). */
    private static final Duration TICK = Duration.ofMillis(200);

    private static void tick(PartialWriter partials, ChunkSeed seed) {
        try {
            partials.tick();
        } catch (RuntimeException e) {
            // A failing tick must not cancel the ticker (a scheduled task that throws is never run again).
            LOG.warn("chunk {}: partial receipt flush failed: {}", seed.chunkIndex(), e.getMessage());
        }
    }

    /**
     * A case's entry from the executions just run ({@code ran}, for the epochs {@code runs}): the execution itself in
     * a run of one epoch, else the reduction of its epochs, those not run now carried from {@code before} (a rerun's
     * previous entry; null on a first execution).
     */
    private static Receipt.CaseResult assemble(
            RunAgent ra, Receipt.CaseResult before, List<Integer> runs, List<Receipt.CaseResult> ran, int epochs) {
        List<Receipt.CaseResult> executions = new ArrayList<>(epochs);
        if (before != null && epochs > 1) {
            executions.addAll(before.epochs());
        }
        for (int k = 0; k < ran.size(); k++) {
            Receipt.CaseResult x = ran.get(k);
            if (before != null && epochs > 1) {
                executions.set(runs.get(k) - 1, x);
            } else {
                executions.add(x);
            }
        }
        return executions.size() == 1 ? executions.get(0) : ra.reduction().reduce(executions);
    }

    /**
     * The partial receipt chain the chunk row references, verified against the chunk, the lease and what this
     * execution would run ({@code planned}: a rerun's chain may hold only cases it executes again); empty, logged,
     * when it does not verify: damage of a record nobody counted yet, so the chunk is executed whole instead.
     */
    private static Optional<PartialChain.Chain> carriedChain(
            RunContext run,
            ChunkTables.Lease lease,
            ChunkFile chunk,
            ChunkTables.Partial partial,
            int settlementGeneration,
            int epochs,
            List<List<Integer>> planned) {
        List<PartialChain.Case> listed = new ArrayList<>();
        for (int i = 0; i < chunk.cases().size(); i++) {
            ChunkFile.Entry e = chunk.cases().get(i);
            if (!planned.get(i).isEmpty()) {
                listed.add(new PartialChain.Case(e.ordinal(), e.id(), e.sha256()));
            }
        }
        try {
            PartialChain.Chain chain = PartialChain.read(
                    run.reader(),
                    partial.ref(),
                    new PartialChain.Expected(
                            run.runId(),
                            chunk.chunkIndex(),
                            chunk.chunkId(),
                            chunk.membership(),
                            settlementGeneration,
                            epochs,
                            lease.generation(),
                            listed));
            if (chain.entries().size() != partial.cases()) {
                throw new DamagedException(
                        "the chain holds " + chain.entries().size() + " cases, its chunk row says " + partial.cases());
            }
            LOG.info(
                    "chunk {} of run {}: resumed from partial receipt {}: {} cases carried forward, {} to execute",
                    chunk.chunkIndex(),
                    run.runId(),
                    partial.ref().key(),
                    chain.entries().size(),
                    listed.size() - chain.entries().size());
            return Optional.of(chain);
        } catch (DamagedException e) {
            LOG.warn(
                    "chunk {} of run {}: partial receipt chain {} ignored, the chunk is executed whole: {}",
                    chunk.chunkIndex(),
                    run.runId(),
                    partial.ref().key(),
                    e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * The executions of case {@code index} to run (1-based epochs; {@code [1]} in a run of one epoch): all of them
     * without a previous receipt, else those of the previous entry that ended errored ({@link
     * Receipt#erroredExecution}); none for a case that passed or failed, which is carried forward.
     */
    static List<Integer> executionsToRun(List<Receipt.CaseResult> previous, int index, int epochs) {
        List<Integer> out = new ArrayList<>();
        if (previous == null) {
            for (int e = 1; e <= epochs; e++) {
                out.add(e);
            }
            return out;
        }
        Receipt.CaseResult before = previous.get(index);
        if (epochs == 1) {
            if (Receipt.erroredExecution(before)) {
                out.add(1);
            }
            return out;
        }
        for (int e = 1; e <= epochs; e++) {
            if (Receipt.erroredExecution(before.epochs().get(e - 1))) {
                out.add(e);
            }
        }
        return out;
    }

    /**
     * The rerun header of the new receipt: the executions run, and the usage of the ones they replaced added to what
     * the previous receipt had superseded already (each paid call counts once, in the receipt that replaced it).
     */
    private static Receipt.Rerun rerunOf(
            ChunkTables.Rerun lease,
            Optional<Receipt> previous,
            List<List<Integer>> toRun,
            List<Receipt.CaseResult> results,
            int epochs) {
        List<Receipt.Executed> executed = new ArrayList<>();
        Map<String, Receipt.Usage> superseded = new LinkedHashMap<>();
        previous.flatMap(Receipt::rerun).ifPresent(r -> superseded.putAll(r.supersededUsage()));
        for (int i = 0; i < results.size(); i++) {
            List<Integer> runs = toRun.get(i);
            if (runs.isEmpty()) {
                continue;
            }
            executed.add(new Receipt.Executed(results.get(i).ordinal(), epochs > 1 ? runs : List.of()));
            if (previous.isEmpty()) {
                continue;
            }
            Receipt.CaseResult before = previous.get().cases().get(i);
            for (int e : runs) {
                Receipt.CaseResult replaced = epochs > 1 ? before.epochs().get(e - 1) : before;
                Receipt.Usage u = replaced.usage()
                        .orElseThrow(
                                () -> new DamagedException(
                                        "case " + before.id()
                                                + ": its previous receipt records no usage (written before version 4); it cannot be rerun"));
                superseded.merge(Receipt.ALL_CASES, u, Receipt.Usage::plus);
                for (String g : before.gates().keySet()) {
                    superseded.merge(g, u, Receipt.Usage::plus);
                }
            }
        }
        return new Receipt.Rerun(lease.generation(), lease.previous(), executed, superseded);
    }

    /** The receipt a rerun's chunk was done with, read through its reference and checked to be this chunk's. */
    private static Receipt previousReceipt(RunContext run, ChunkSeed seed, ObjectRef ref, int cases) {
        String key = ref.key().value();
        Receipt r = ReceiptParser.fromJson(
                ChunkRows.read(run.reader(), ref, "previous receipt " + key + " of chunk " + seed.chunkIndex()), key);
        if (!r.runId().equals(run.runId())
                || r.chunkIndex() != seed.chunkIndex()
                || !r.chunkId().equals(seed.chunkId())
                || !r.membership().equals(seed.membership())
                || r.cases().size() != cases) {
            throw new DamagedException("previous receipt " + key + " of chunk " + seed.chunkIndex() + " of run "
                    + run.runId() + " is not the receipt of this chunk; the execution records were altered");
        }
        return r;
    }

    /**
     * Starts one execution of the case (its epoch {@code epoch}, 0 in a run of one epoch): the agent (recorded as
     * transcripts), then the evaluators of the mask, then the gate outcomes; the transcripts end with the output, the
     * evaluators' results and the gate outcomes; then {@code done} is given the result, before the future completes.
     * The agent waits without a thread where it can ({@link Agent#start}); the steps after it run on the work pool, or
     * on the blocking pool when the run's evaluators block. A sandboxed execution runs whole on the blocking pool.
     * Cancelling the future cancels the step running (interrupting a blocking one, aborting a request).
     */
    private CompletableFuture<Receipt.CaseResult> startCase(
            RunContext run,
            RunAgent ra,
            TranscriptRecorder.Scope scope,
            StoredCase c,
            ChunkFile.Entry entry,
            int epoch,
            java.util.function.Consumer<Receipt.CaseResult> done) {
        TranscriptRecorder recorder = new TranscriptRecorder(scope, c, epoch, transcripts);
        if (ra.sandbox().sandboxed()) {
            // One sandbox per execution: the agent's attempts (each from a fresh copy of the workdir) and then the
            // command evaluators, which see what the agent left. Its directory and processes go when it closes.
            return Futures.supplyInterruptibly(blocking, () -> {
                try (SandboxAttempt sandbox = sandboxes.start(ra.sandbox(), c.id() + (epoch > 0 ? "-e" + epoch : ""))) {
                    CaseRecord record = new CaseRecord(c.id(), c.ordinal(), c.caseJson());
                    AgentOutcome outcome = ra.agent()
                            .run(new AgentCall(
                                    record, recorder, Math.max(1, epoch), ra.budget(), Optional.of(sandbox)));
                    Evaluated e = evaluated(run, ra, recorder, c, entry, record, outcome, Optional.of(sandbox));
                    Receipt.CaseResult result = e.result().withKeptFiles(keep(run, sandbox.keptFiles()));
                    result = result.withTranscripts(recorder.finish(result, e.output(), e.judged(), e.stopped()));
                    done.accept(result);
                    return result;
                }
            });
        }
        CaseRecord record = new CaseRecord(c.id(), c.ordinal(), c.caseJson());
        Steps steps = new Steps();
        CompletableFuture<AgentOutcome> agent;
        try {
            agent = ra.agent().start(new AgentCall(record, recorder, Math.max(1, epoch), ra.budget()), blocking, work);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        steps.track(agent);
        agent.whenComplete((outcome, failure) -> {
            if (failure != null) {
                steps.result.completeExceptionally(Futures.cause(failure));
                return;
            }
            CompletableFuture<Receipt.CaseResult> finished;
            if (ra.evaluatorsBlock()) {
                finished = steps.track(Futures.supplyInterruptibly(blocking, () -> {
                    Evaluated e = evaluated(run, ra, recorder, c, entry, record, outcome, Optional.empty());
                    Receipt.CaseResult result = e.result()
                            .withTranscripts(recorder.finish(e.result(), e.output(), e.judged(), e.stopped()));
                    done.accept(result);
                    return result;
                }));
            } else {
                // Judges wait for their models without a thread; the rest are short steps on the work pool.
                CompletableFuture<Evaluated> judged =
                        steps.track(evaluatedAsync(run, ra, recorder, c, entry, record, outcome));
                finished = steps.track(judged.thenApplyAsync(
                        e -> {
                            Receipt.CaseResult result = e.result()
                                    .withTranscripts(recorder.finish(e.result(), e.output(), e.judged(), e.stopped()));
                            done.accept(result);
                            return result;
                        },
                        work));
            }
            finished.whenComplete((result, t) -> {
                if (t != null) {
                    steps.result.completeExceptionally(Futures.cause(t));
                } else {
                    steps.result.complete(result);
                }
            });
        });
        return steps.result;
    }

    /**
     * The steps of one execution, one after another: cancelling its {@link #result} cancels the step in flight
     * (a dependent future's cancellation does not reach the future it depends on).
     */
    private static final class Steps {
        final CompletableFuture<Receipt.CaseResult> result = new CompletableFuture<>();
        private final AtomicReference<Future<?>> step = new AtomicReference<>();

        Steps() {
            result.whenComplete((r, t) -> {
                Future<?> f = step.get();
                if (result.isCancelled() && f != null) {
                    f.cancel(true);
                }
            });
        }

        <F extends Future<?>> F track(F f) {
            step.set(f);
            if (result.isCancelled()) {
                f.cancel(true);
            }
            return f;
        }
    }

    /** Stores kept files as immutable, content-addressed objects of the run (docs/formats/exec-receipt.md). */
    private static List<Receipt.KeptFileRef> keep(RunContext run, List<KeptFile> files) {
        List<Receipt.KeptFileRef> out = new ArrayList<>(files.size());
        for (KeptFile f : files) {
            ObjectRef ref = run.store()
                    .create(Receipt.keptFileKey(run.runId(), Sha256.of(f.bytes())), f.bytes(), Deadline.after(READ));
            out.add(new Receipt.KeptFileRef(f.path(), ref));
        }
        return out;
    }

    /**
     * A case's result and the output its evaluators judged (null when the agent errored), with what its transcript
     * shows: the evaluators' results, and, when a per-case limit stopped the case after them, why.
     */
    private record Evaluated(
            Receipt.CaseResult result, String output, List<Receipt.EvaluatorResult> judged, Optional<String> stopped) {
        Evaluated(Receipt.CaseResult result, String output) {
            this(result, output, result.evaluatorResults(), Optional.empty());
        }
    }

    /** What the evaluators and gates make of the agent's {@code outcome}. */
    private Evaluated evaluated(
            RunContext run,
            RunAgent ra,
            TranscriptRecorder recorder,
            StoredCase c,
            ChunkFile.Entry entry,
            CaseRecord record,
            AgentOutcome outcome,
            Optional<SandboxAttempt> sandbox) {
        Evaluated unevaluated = unevaluated(run, ra, c, entry, outcome);
        if (unevaluated != null) {
            return unevaluated;
        }
        String output = outcome.output().orElseThrow();
        EvaluationContext context = EvaluationContext.of(outcome, ra.cost(), recorder);
        List<EvaluatorResult> results = ra.evaluators()
                .evaluate(
                        entry.evaluators(),
                        record,
                        output,
                        sandbox.map(context::inSandbox).orElse(context));
        return evaluated(run, ra, c, entry, outcome, output, results);
    }

    /**
     * As {@link #evaluated(RunContext, RunAgent, TranscriptRecorder, StoredCase, ChunkFile.Entry, CaseRecord,
     * AgentOutcome, Optional)} without a sandbox and without a thread while judges wait for their models: the
     * evaluators' steps and the result's on the work pool. Cancelling the future cancels the judge call in flight.
     */
    private CompletableFuture<Evaluated> evaluatedAsync(
            RunContext run,
            RunAgent ra,
            TranscriptRecorder recorder,
            StoredCase c,
            ChunkFile.Entry entry,
            CaseRecord record,
            AgentOutcome outcome) {
        try {
            Evaluated unevaluated = unevaluated(run, ra, c, entry, outcome);
            if (unevaluated != null) {
                return CompletableFuture.completedFuture(unevaluated);
            }
            String output = outcome.output().orElseThrow();
            EvaluationContext context = EvaluationContext.of(outcome, ra.cost(), recorder);
            CompletableFuture<List<EvaluatorResult>> results =
                    ra.evaluators().evaluateAsync(entry.evaluators(), record, output, context, work);
            CompletableFuture<Evaluated> out =
                    results.thenApplyAsync(r -> evaluated(run, ra, c, entry, outcome, output, r), work);
            // Cancelling the result cancels the evaluators' call in flight.
            out.whenComplete((e, t) -> {
                if (out.isCancelled()) {
                    results.cancel(true);
                }
            });
            return out;
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The result of a case whose agent errored (no evaluator runs), or null when its output is to be evaluated. */
    private Evaluated unevaluated(
            RunContext run, RunAgent ra, StoredCase c, ChunkFile.Entry entry, AgentOutcome outcome) {
        if (outcome.cancelled()) {
            throw new CancelledException("case " + c.id() + " was cancelled");
        }
        if (outcome.status() != AgentOutcome.Status.ERROR) {
            return null;
        }
        long agentMillis = outcome.elapsed().toMillis();
        int attempts = outcome.attempts().size();
        List<TokenUsage> agentUsage =
                outcome.attempts().stream().flatMap(a -> a.usage().stream()).toList();
        Map<String, Receipt.GateOutcome> gates = new LinkedHashMap<>();
        List<String> gateNames = run.gateNames();
        for (int g = 0; g < gateNames.size(); g++) {
            if ((entry.gates() & (1L << g)) != 0) {
                gates.put(gateNames.get(g), Receipt.GateOutcome.ERRORED);
            }
        }
        var err = outcome.error().orElseThrow();
        return new Evaluated(
                new Receipt.CaseResult(
                        c.ordinal(),
                        c.id(),
                        c.sha256(),
                        true,
                        Optional.empty(),
                        Optional.empty(),
                        0,
                        Optional.empty(),
                        attempts,
                        agentMillis,
                        Optional.of(new Receipt.Error(err.type().code(), err.message())),
                        List.of(),
                        gates,
                        List.of(),
                        List.of(),
                        Optional.of(cached(outcome, Receipt.Usage.of(agentUsage, List.of(), ra.pricing())))),
                null);
    }

    /** What the gates make of the evaluators' {@code results} on the agent's {@code output}. */
    private Evaluated evaluated(
            RunContext run,
            RunAgent ra,
            StoredCase c,
            ChunkFile.Entry entry,
            AgentOutcome outcome,
            String output,
            List<EvaluatorResult> results) {
        long agentMillis = outcome.elapsed().toMillis();
        int attempts = outcome.attempts().size();
        List<TokenUsage> agentUsage =
                outcome.attempts().stream().flatMap(a -> a.usage().stream()).toList();
        Map<String, Receipt.GateOutcome> gates = new LinkedHashMap<>();
        List<String> gateNames = run.gateNames();
        Map<Integer, EvaluatorResult> byIndex = new HashMap<>();
        List<Receipt.EvaluatorResult> evaluated = new ArrayList<>();
        List<TokenUsage> judgeUsage = new ArrayList<>();
        for (EvaluatorResult r : results) {
            if (r.cancelled()) {
                throw new CancelledException("case " + c.id() + " was cancelled");
            }
            byIndex.put(r.index(), r);
            evaluated.add(new Receipt.EvaluatorResult(
                    r.name(),
                    r.passed(),
                    r.score(),
                    r.error().map(e -> new Receipt.Error(e.type().code(), e.message())),
                    r.elapsed().toMillis(),
                    r.reason(),
                    r.votes().stream()
                            .map(v -> new Receipt.Vote(
                                    v.judge(),
                                    v.score().isPresent()
                                            ? Optional.of(v.score().getAsDouble())
                                            : Optional.empty(),
                                    v.reason()))
                            .toList()));
            judgeUsage.addAll(r.usage());
        }
        for (int g = 0; g < gateNames.size(); g++) {
            if ((entry.gates() & (1L << g)) == 0) {
                continue;
            }
            gates.put(gateNames.get(g), gateOutcome(run.requiredByGate().get(g), byIndex, c.id()));
        }
        List<TokenUsage> all = new ArrayList<>(agentUsage);
        all.addAll(judgeUsage);
        Optional<String> over =
                judgeUsage.isEmpty() ? Optional.empty() : ra.budget().exceededBy(all);
        if (over.isPresent()) {
            // The judges took the case over a limit: the case is errored, as one whose agent did; its output and
            // the judges' results stay in its transcript, which shows where it stopped.
            String stopped = over.get() + "; stopped after the evaluators";
            Map<String, Receipt.GateOutcome> errored = new LinkedHashMap<>();
            gates.keySet().forEach(g -> errored.put(g, Receipt.GateOutcome.ERRORED));
            return new Evaluated(
                    new Receipt.CaseResult(
                            c.ordinal(),
                            c.id(),
                            c.sha256(),
                            true,
                            Optional.empty(),
                            Optional.empty(),
                            0,
                            Optional.empty(),
                            attempts,
                            agentMillis,
                            Optional.of(new Receipt.Error(AgentErrorType.LIMIT_EXCEEDED.code(), stopped)),
                            List.of(),
                            errored,
                            List.of(),
                            List.of(),
                            Optional.of(cached(outcome, Receipt.Usage.of(agentUsage, judgeUsage, ra.pricing())))),
                    output,
                    evaluated,
                    Optional.of(stopped));
        }
        byte[] utf8 = output.getBytes(StandardCharsets.UTF_8);
        Sha256 sha = Sha256.of(utf8);
        Optional<String> inline = Optional.empty();
        Optional<ObjectRef> ref = Optional.empty();
        if (utf8.length <= Receipt.INLINE_OUTPUT_BYTES) {
            inline = Optional.of(output);
        } else {
            ref = Optional.of(run.store().create(Receipt.outputKey(run.runId(), sha), utf8, Deadline.after(READ)));
        }
        return new Evaluated(
                new Receipt.CaseResult(
                        c.ordinal(),
                        c.id(),
                        c.sha256(),
                        false,
                        inline,
                        ref,
                        utf8.length,
                        Optional.of(sha),
                        attempts,
                        agentMillis,
                        Optional.empty(),
                        evaluated,
                        gates,
                        List.of(),
                        List.of(),
                        Optional.of(cached(outcome, Receipt.Usage.of(agentUsage, judgeUsage, ra.pricing())))),
                output);
    }

    /** {@code usage}, marked with the agent's answer from the answer cache when the outcome was one. */
    private static Receipt.Usage cached(AgentOutcome outcome, Receipt.Usage usage) {
        return outcome.cached() ? usage.withCachedAnswer() : usage;
    }

    /**
     * A case passes a gate when every required evaluator passed; it is errored when one of them errored; otherwise
     * it failed. A required evaluator missing from the results means the plan's masks disagree: damaged.
     */
    static Receipt.GateOutcome gateOutcome(int[] required, Map<Integer, EvaluatorResult> byIndex, String caseId) {
        boolean allPassed = true;
        boolean errored = false;
        for (int index : required) {
            EvaluatorResult r = byIndex.get(index);
            if (r == null) {
                throw new DamagedException("case " + caseId + ": a gate selecting it requires evaluator " + index
                        + ", which its evaluator mask does not include; the plan is inconsistent");
            }
            if (r.status() == EvaluatorResult.Status.ERROR) {
                errored = true;
            } else if (!r.passed()) {
                allPassed = false;
            }
        }
        if (errored) {
            return Receipt.GateOutcome.ERRORED;
        }
        return allPassed ? Receipt.GateOutcome.PASSED : Receipt.GateOutcome.FAILED;
    }

    /** How long {@link #close} waits for interrupted case threads to finish reaping their agents' processes. */
    private static final Duration CASES_STOP = Duration.ofSeconds(10);

    /**
     * Interrupts the case threads and waits (at most {@link #CASES_STOP}) until they end: an interrupted case thread
     * still kills and reaps the processes its agent started ({@code ChildProcess}), and a worker that returned before
     * it did would let the process exit (on SIGTERM, at once) and leave them running. Then closes the agents.
     */
    @Override
    public void close() {
        flushes.shutdownNow();
        work.shutdownNow();
        blocking.shutdownNow();
        try {
            long until = System.nanoTime() + CASES_STOP.toNanos();
            boolean ended = blocking.awaitTermination(CASES_STOP.toMillis(), TimeUnit.MILLISECONDS)
                    && work.awaitTermination(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (!ended) {
                LOG.warn("case threads still running {} after they were interrupted", CASES_STOP);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (agents) {
            agents.values().forEach(a -> {
                a.agent().close();
                a.evaluators().close();
            });
            agents.clear();
        }
    }
}
