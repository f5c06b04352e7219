package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.CompletedStep;
import dev.vigilo.checkpoint.ItemState;
import dev.vigilo.checkpoint.LogLocation;
import dev.vigilo.checkpoint.LogReader;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.checkpoint.LogWriter;
import dev.vigilo.checkpoint.WriterOptions;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.fleet.BudgetReachedException;
import dev.vigilo.fleet.CostBudget;
import dev.vigilo.fleet.LimiterState;
import dev.vigilo.fleet.ProcessLimiters;
import dev.vigilo.llm.ChatLimiter;
import dev.vigilo.llm.EndpointText;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import org.jdbi.v3.core.Jdbi;

/**
 * Runs a pipeline over its experiment's checkpoint log, resuming where the log says: a step whose
 * STEP_COMPLETED is in the log never runs again; every step's field updates and its STEP_COMPLETED
 * are one durable batch. Safe to kill -9 at any point and run again with the same arguments. Several
 * runs of one experiment may work at once, on one machine or many sharing the durable root: each
 * writes through its own writer (MemWAL shard) and works only on the item buckets it claimed ({@link
 * Assignment}); a run that is killed has its buckets finished by the others.
 *
 * <p>A run: {@link SeedReader} validates the whole seed input (nothing is written if it is bad), and
 * every api_key_env variable must be set; the run joins the experiment ({@link Assignment}), opens its
 * writer, folds the log ({@link WorkFeed}), then {@link ItemScheduler} runs the items of the buckets it
 * claims, bucket by bucket, through {@link ItemRunner} on {@code workers} threads. When no bucket is
 * left to claim, the run flushes its writer and releases its buckets, and waits for buckets other live
 * runs hold (taking over those whose run died) until every bucket is finished; then the writer is closed
 * and {@link EndOfRunMaintenance} runs.
 *
 * <p>Threads: the calling thread reads the seeds, folds the log, claims buckets, creates seeds and
 * coordinates the scheduler; it alone calls {@link DatagenProgress} and keeps the counts. Each item's
 * mirror is owned by that thread until the item is scheduled, then by the worker that runs it. Writes to
 * the log come from the calling thread (seeds) and from workers (steps), each for items it owns,
 * through the one {@link LogWriter}, whose group commit lets concurrent items' batches share durable puts.
 */
public final class PipelineRunner {
    /** How long a run with nothing to claim waits before looking at the other runs' buckets again. */
    static final Duration POLL = Duration.ofMillis(500);

    /**
     * Run options.
     *
     * @param durableRoot where the experiment's checkpoint log lives: a local directory or a prefix of
     *     a configured S3 store (see {@link LogRoot#resolve})
     * @param experiment experiment name
     * @param workers items processed concurrently (>= 1)
     * @param progress told the run's progress, from the calling thread ({@link DatagenProgress#NONE}:
     *     nothing)
     * @param retryFailed items that failed finally get their failed step's attempts again
     * @param cacheFrom experiments of the same pipeline whose cached chat answers this run may reuse
     * @param leaseTtl how long a run's slot outlives its last heartbeat on an S3 root before another run
     *     takes its buckets over (a local root's OS lock goes with the process)
     * @param environment where api_key_env variables are looked up (System::getenv)
     * @param groupCommit whether concurrent items' checkpoint batches share durable puts (on by default; off
     *     writes one put per batch, for measurements)
     * @param control the control database (null: none): with it, chat steps with {@code rate_limit} send under
     *     the fleet-wide limiter of their endpoint and a pipeline's {@code budget} is kept there; without it, rate
     *     limits are per process and a budget is refused
     */
    public record Options(
            LogRoot durableRoot,
            String experiment,
            int workers,
            DatagenProgress progress,
            boolean retryFailed,
            List<String> cacheFrom,
            Duration leaseTtl,
            Function<String, String> environment,
            boolean groupCommit,
            Jdbi control) {
        /** The default lease duration on S3 roots. */
        public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(30);

        public Options {
            Objects.requireNonNull(durableRoot, "durableRoot");
            Objects.requireNonNull(experiment, "experiment");
            Objects.requireNonNull(progress, "progress");
            Objects.requireNonNull(leaseTtl, "leaseTtl");
            Objects.requireNonNull(environment, "environment");
            cacheFrom = List.copyOf(cacheFrom);
            if (workers < 1) {
                throw new IllegalArgumentException("--workers must be >= 1, got " + workers);
            }
            if (leaseTtl.toMillis() < 600) {
                throw new IllegalArgumentException("leaseTtl must be >= 600 ms");
            }
        }

        /** Defaults: no retry of failed items, no other cache, 30 s leases, the process environment. */
        public Options(LogRoot durableRoot, String experiment, int workers, DatagenProgress progress) {
            this(
                    durableRoot,
                    experiment,
                    workers,
                    progress,
                    false,
                    List.of(),
                    DEFAULT_LEASE_TTL,
                    System::getenv,
                    true,
                    null);
        }

        /** With {@code --retry-failed}. */
        public Options withRetryFailed(boolean retry) {
            return new Options(
                    durableRoot,
                    experiment,
                    workers,
                    progress,
                    retry,
                    cacheFrom,
                    leaseTtl,
                    environment,
                    groupCommit,
                    control);
        }

        /** With {@code --cache-from} experiments. */
        public Options withCacheFrom(List<String> experiments) {
            return new Options(
                    durableRoot,
                    experiment,
                    workers,
                    progress,
                    retryFailed,
                    experiments,
                    leaseTtl,
                    environment,
                    groupCommit,
                    control);
        }

        /** With another lease duration. */
        public Options withLeaseTtl(Duration ttl) {
            return new Options(
                    durableRoot,
                    experiment,
                    workers,
                    progress,
                    retryFailed,
                    cacheFrom,
                    ttl,
                    environment,
                    groupCommit,
                    control);
        }

        /** With another environment (api_key_env lookups). */
        public Options withEnvironment(Function<String, String> env) {
            return new Options(
                    durableRoot,
                    experiment,
                    workers,
                    progress,
                    retryFailed,
                    cacheFrom,
                    leaseTtl,
                    env,
                    groupCommit,
                    control);
        }

        /**
         * With the control database: chat steps with {@code rate_limit} share the fleet's limiter of their endpoint
         * with every other process (datagen runs and evaluation workers alike), and {@code budget} is kept there.
         */
        public Options withControl(Jdbi db) {
            return new Options(
                    durableRoot,
                    experiment,
                    workers,
                    progress,
                    retryFailed,
                    cacheFrom,
                    leaseTtl,
                    environment,
                    groupCommit,
                    db);
        }

        /** With group commit on or off. */
        public Options withGroupCommit(boolean on) {
            return new Options(
                    durableRoot,
                    experiment,
                    workers,
                    progress,
                    retryFailed,
                    cacheFrom,
                    leaseTtl,
                    environment,
                    on,
                    control);
        }
    }

    private final PipelineSpec spec;
    private final Options opts;

    private PipelineRunner(PipelineSpec spec, Options opts) {
        this.spec = spec;
        this.opts = opts;
    }

    /**
     * Runs (or resumes) {@code spec} as experiment {@code opts.experiment()} and returns the final
     * status.
     *
     * @throws PipelineDefinitionException the seed input is invalid, or an api_key_env variable is not
     *     set (FILE:LINE:COLUMN); nothing was written
     * @throws dev.vigilo.common.errors.NotFoundException a {@code cacheFrom} experiment does not exist
     * @throws dev.vigilo.common.errors.VigiloException the log failed (e.g. another run took over this
     *     run's slot)
     */
    public static ExperimentStatus run(PipelineSpec spec, Options opts) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(opts, "opts");
        return new PipelineRunner(spec, opts).run();
    }

    private ExperimentStatus run() {
        if (opts.control() == null && spec.hasCircuitBreaker()) {
            throw new InvalidInputException("pipeline " + spec.name() + " has a circuit_breaker, which is the fleet's"
                    + " (kept in the control database); run it with one (vigilo datagen run opens it), or remove"
                    + " circuit_breaker");
        }
        if (spec.budget() != null && opts.control() == null) {
            throw new InvalidInputException("pipeline " + spec.name() + " has a budget, which is kept in the control"
                    + " database; run it with one (vigilo datagen run opens it), or remove budget");
        }
        try {
            return runWithinBudget();
        } catch (BudgetReachedException e) {
            CostBudget.State st = e.state();
            throw new ConflictException(
                    "experiment " + opts.experiment() + " of pipeline " + spec.name() + " stopped at its budget: "
                            + plain(st.charged()) + " charged (" + plain(st.settled()) + " spent, "
                            + plain(st.reserved()) + " reserved) of budget.max_cost " + plain(st.maxCost())
                            + "; raise budget.max_cost in " + spec.budget().source()
                            + " and run the same command again to continue (completed steps are kept)",
                    e);
        }
    }

    private static String plain(java.math.BigDecimal d) {
        return d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
    }

    private ExperimentStatus runWithinBudget() {
        // Validates the whole input, and every key variable, before anything is written.
        List<SeedReader.Seed> seeds = SeedReader.read(spec.input(), spec.idField());
        Map<String, String> keys = apiKeys();
        ResponseCache cache = new ResponseCache();
        for (String other : opts.cacheFrom()) {
            try (CheckpointLog log = CheckpointLog.open(new LogLocation(opts.durableRoot(), spec.name(), other));
                    LogReader r = log.reader()) {
                r.foldAll().values().forEach(st -> preload(cache, st));
            }
        }
        LogLocation loc = new LogLocation(opts.durableRoot(), spec.name(), opts.experiment());
        try (CheckpointLog log = CheckpointLog.openOrCreate(loc)) {
            if (spec.budget() != null) {
                // Lets datagen status (which reads no pipeline file) know to read the budget from the control database.
                BudgetRecord.write(log, spec.budget().maxCost());
            }
            try (Assignment assignment = Assignment.join(log, opts.leaseTtl())) {
                LogWriter writer = log.openWriter(
                        assignment.writerName(),
                        opts.groupCommit() ? WriterOptions.DEFAULTS : WriterOptions.DEFAULTS.withGroupBatches(1));
                try {
                    assignment.writerReplayed();
                    process(log, writer, assignment, seeds, keys, cache);
                } finally {
                    writer.close();
                }
            }
            EndOfRunMaintenance.run(log);
            return Experiments.status(log, spec.name(), opts.experiment());
        }
    }

    /** The value of every api_key_env variable; a missing one is an error at its place in the pipeline. */
    private Map<String, String> apiKeys() {
        Map<String, String> keys = new HashMap<>();
        List<StepSpec> all = new ArrayList<>();
        for (StepSpec s : spec.steps()) {
            all.add(s);
            if (s.body() != null) {
                all.add(s.body());
            }
        }
        for (StepSpec s : all) {
            ChatSpec c = s.chat();
            if (c == null || c.apiKeyEnv() == null || keys.containsKey(c.apiKeyEnv())) {
                continue;
            }
            String v = opts.environment().apply(c.apiKeyEnv());
            if (v == null || v.isBlank()) {
                throw c.apiKeyEnvAt()
                        .error("environment variable " + c.apiKeyEnv() + " (of step \"" + s.name()
                                + "\") is not set; export it with the endpoint's API key");
            }
            keys.put(c.apiKeyEnv(), v);
        }
        return keys;
    }

    /** Adds the cached answers an item's completed chat steps keep in their tags. */
    static void preload(ResponseCache cache, ItemState st) {
        for (CompletedStep c : st.completedSteps()) {
            if (c.queryTagsJson() == null || !c.queryTagsJson().contains("\"answer\"")) {
                continue;
            }
            try {
                JsonNode chat = Json.parse(c.queryTagsJson()).path("chat");
                String hash = chat.path("request_hash").asText(null);
                if (hash != null) {
                    ResponseCache.asAnswer(chat.get("answer")).ifPresent(a -> cache.preload(hash, a));
                }
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                // Tags are non-authoritative: an unreadable one is simply no cache entry.
            }
        }
    }

    private void process(
            CheckpointLog log,
            LogWriter writer,
            Assignment assignment,
            List<SeedReader.Seed> seeds,
            Map<String, String> keys,
            ResponseCache cache) {
        Checkpointer checkpointer = new Checkpointer(writer, UUID.randomUUID().toString());
        DedupGates gates = new DedupGates(
                spec.steps(),
                seeds.stream().map(SeedReader.Seed::id).toList(),
                opts.retryFailed(),
                log,
                writer,
                System::nanoTime);
        WorkFeed feed = new WorkFeed(
                log,
                assignment,
                checkpointer,
                seeds,
                opts.retryFailed(),
                st -> {
                    preload(cache, st);
                    gates.observe(st);
                },
                System::nanoTime,
                opts.workers());
        Tally tally = new Tally(opts.progress());
        tally.start(feed.startFinished(), feed.startFailed(), feed.knownItems());
        boolean chat = spec.steps().stream()
                .anyMatch(s -> s.kind() == StepKind.CHAT
                        || (s.body() != null && s.body().kind() == StepKind.CHAT));
        CostBudget budget = budget();
        try (ProcessLimiters fleet = fleetLimiters();
                ChatClient client = chat ? ChatClient.standard(fleetLimiter(fleet), budget) : null) {
            StepExecutor executor = new StepExecutor(chat ? new ChatStep(client, cache, keys) : null);
            ItemRunner runner = new ItemRunner(spec.steps(), executor, new StepLimits(spec.steps()), checkpointer);
            while (true) {
                ItemScheduler.runAll(
                        opts.workers(),
                        List.of(),
                        runner::run,
                        (item, spawned) -> {
                            gates.returned(item, spawned);
                            if (item.parkedAt() == null) {
                                tally.finished(item, spawned);
                            }
                        },
                        new ItemScheduler.Source<RunItem>() {
                            @Override
                            public List<RunItem> more(int pending) {
                                List<RunItem> out = new ArrayList<>(gates.ready(feed::elsewhere));
                                out.addAll(feed.more(pending + out.size()));
                                return out;
                            }

                            @Override
                            public boolean holding() {
                                return gates.holding();
                            }
                        });
                // Our buckets are finished: make them visible, then let the others know.
                writer.flush();
                assignment.release(feed.claimed(), true);
                feed.released();
                if (!feed.hasPending()) {
                    break;
                }
                if (assignment.leaseLost()) {
                    throw new FencedException("this run's slot was taken over by another run of experiment "
                            + opts.experiment() + " (its lease was not renewed in time)");
                }
                sleep(POLL);
            }
        }
    }

    /**
     * The process's fleet limiters, when a control database is given and a chat step (or a loop's chat body) has a
     * {@code rate_limit}; else null (each process limits itself).
     */
    private ProcessLimiters fleetLimiters() {
        if (opts.control() == null || !spec.fleetLimited()) {
            return null;
        }
        return new ProcessLimiters(opts.control(), UUID.randomUUID(), new ProcessLimiters.Listener() {});
    }

    /**
     * The fleet's limiter of a chat step's endpoint (its url, model and api_key_env name: the key run evaluation's
     * endpoints use too), limited to the step's {@code rate_limit} with the default circuit breaker; empty for a step
     * without one, or without fleet limiters.
     */
    private static Function<ChatSpec, Optional<ChatLimiter>> fleetLimiter(ProcessLimiters fleet) {
        if (fleet == null) {
            return c -> Optional.empty();
        }
        // Asked before every request: looked up once per step's spec (asking the process's limiters makes a lease due),
        // by identity (a step's spec is one object; its hash would walk its JSON).
        Map<ChatSpec, Optional<ChatLimiter>> known =
                java.util.Collections.synchronizedMap(new java.util.IdentityHashMap<>());
        return c -> known.computeIfAbsent(c, spec -> limiterOf(fleet, spec));
    }

    private static Optional<ChatLimiter> limiterOf(ProcessLimiters fleet, ChatSpec c) {
        if (!c.fleetLimited()) {
            return Optional.empty();
        }
        Optional<String> keyEnv = Optional.ofNullable(c.apiKeyEnv());
        String key = ProcessLimiters.key(c.url().toString(), c.model(), keyEnv);
        String display = EndpointText.display(c.url()) + " model " + c.model()
                + keyEnv.map(v -> " key $" + v).orElse("");
        ChatSpec.CircuitBreaker breaker = c.circuitBreaker() != null
                ? c.circuitBreaker()
                : new ChatSpec.CircuitBreaker(
                        LimiterState.Limits.DEFAULT_FAILURES, LimiterState.Limits.DEFAULT_COOL_DOWN_SECONDS);
        LimiterState.Limits limits = new LimiterState.Limits(
                c.rateLimit() == null ? 0 : c.rateLimit().requestsPerMinute(),
                c.rateLimit() == null ? 0 : c.rateLimit().tokensPerMinute(),
                0,
                breaker.failures(),
                Duration.ofSeconds(breaker.coolDownSeconds()));
        return Optional.of(fleet.limiter(key, display, limits));
    }

    /** The experiment's budget in the control database; null without {@code budget}. */
    private CostBudget budget() {
        PipelineSpec.Budget b = spec.budget();
        if (b == null) {
            return null;
        }
        return new CostBudget(
                opts.control(),
                budgetKey(opts.durableRoot(), spec.name(), opts.experiment()),
                "experiment " + opts.experiment() + " of pipeline " + spec.name(),
                b.maxCost());
    }

    /** The budget key of an experiment: its durable root, pipeline and experiment. */
    static String budgetKey(LogRoot root, String pipeline, String experiment) {
        return CostBudget.key("datagen", root.uri(), pipeline, experiment);
    }

    /** Every chat step's spec, loop bodies included. */
    private List<ChatSpec> chatSpecs() {
        List<ChatSpec> out = new ArrayList<>();
        for (StepSpec s : spec.steps()) {
            if (s.chat() != null) {
                out.add(s.chat());
            }
            if (s.body() != null && s.body().chat() != null) {
                out.add(s.body().chat());
            }
        }
        return out;
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancelledException("interrupted", e);
        }
    }

    /** The run's counts, kept and reported on the calling thread only. */
    private static final class Tally {
        private final DatagenProgress progress;
        private int items;
        private int finished;
        private int failed;

        Tally(DatagenProgress progress) {
            this.progress = progress;
        }

        void start(int finishedBefore, int failedBefore, int known) {
            finished = finishedBefore;
            failed = failedBefore;
            items = known;
            progress.started(finished, failed, items);
        }

        void finished(RunItem item, List<RunItem> spawned) {
            items += spawned.size();
            finished++;
            if (item.status() == ItemStatus.FAILED) {
                failed++;
            }
            progress.itemFinished(item.id(), item.status(), finished, failed, items);
        }
    }
}
