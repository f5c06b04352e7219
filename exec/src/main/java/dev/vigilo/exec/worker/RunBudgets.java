package dev.vigilo.exec.worker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.BudgetTable;
import dev.vigilo.exec.record.BudgetTable.Amount;
import dev.vigilo.llm.ChatCall;
import dev.vigilo.llm.ChatExchange;
import dev.vigilo.llm.ChatLimiter;
import dev.vigilo.llm.Pricing;
import dev.vigilo.llm.Usage;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker's share of its runs' budgets (docs/execution.md, "Budget"): per run with a budget, a {@link ChatLimiter}
 * that every model call of the run's agent and judges on this worker reserves from before it is sent and settles
 * after it ended. Calls draw from a grant the worker holds in the control database ({@link BudgetTable}), so a call
 * costs no database round trip: a grant running low (fewer than {@link #AHEAD} calls of the size just taken left) is
 * grown ahead on the worker's budget thread. Only a call the grant cannot cover waits on its own thread for one
 * control transaction (one grower at a time per run): whether it may be sent must be decided before the client
 * schedules it, since a limiter refuses by throwing from {@code reserve}. When the budget cannot cover it the run is
 * paused for its budget ({@code onExhausted}) and the call is refused with a {@link CancelledException}: nothing is
 * sent.
 *
 * <p>A call reserves its token estimate ({@link ChatCall#tokenEstimate()}, an upper bound when it has a {@code
 * max_tokens}) and that many tokens at the run's highest price per token; it is settled at what its answer reports
 * (priced at its model's price, the highest when its model has none), and a call that may have been answered without
 * reporting usage (a timeout, a broken connection, a cancelled exchange) at its whole reservation. The heartbeat
 * publishes each grant's settled use and renews it ({@link #heartbeat}); a grant of a run this worker holds no chunk
 * of and has no call in flight for is released. Thread-safe.
 */
final class RunBudgets {
    private static final Logger LOG = LoggerFactory.getLogger(RunBudgets.class);
    private static final BigDecimal MILLION = BigDecimal.valueOf(1_000_000);
    /** A grant holds up to this many more calls of the size of the one that asked for it. */
    private static final int BATCH_CALLS = 15;
    /** ... and at most this share of the limit, so many workers do not hold the whole budget between them. */
    private static final int BATCH_SHARE = 20;
    /** A grant whose free part holds fewer calls than this is grown ahead, off the calls' threads. */
    private static final int AHEAD = 4;

    private final Placements placements;
    private final UUID worker;
    private final Duration ttl;
    private final Consumer<UUID> onExhausted;
    private final Map<UUID, Budget> budgets = new ConcurrentHashMap<>();
    /** Grows grants ahead of need, one at a time, off the calls' threads. */
    private final ExecutorService ahead = Executors.newSingleThreadExecutor(Threads.daemonFactory("budget"));

    /**
     * @param ttl         how long a grant lives without renewal (the chunk lease's length): a dead worker's grant is
     *                    counted as spent, whole, once it expired
     * @param onExhausted called (on the calling thread) when a run's budget cannot cover a call, before it is refused
     */
    RunBudgets(Placements placements, UUID worker, Duration ttl, Consumer<UUID> onExhausted) {
        this.placements = placements;
        this.worker = worker;
        this.ttl = ttl;
        this.onExhausted = onExhausted;
    }

    /** The limiter of the run's model calls on this worker: {@link ChatLimiter#NONE} for a run without a budget. */
    ChatLimiter limiter(UUID runId, JsonNode configuration, Pricing pricing) {
        Optional<BudgetTable.Limits> limits = BudgetTable.Limits.frozen(runId, configuration);
        if (limits.isEmpty()) {
            return ChatLimiter.NONE;
        }
        return budgets.computeIfAbsent(runId, id -> new Budget(id, limits.get(), pricing));
    }

    /**
     * The heartbeat: publishes each grant's settled use and renews it, and releases the grants of runs this worker
     * holds no chunk of ({@code held}) and has no call in flight for. A database that does not answer is skipped.
     */
    void heartbeat(Set<UUID> held) {
        for (Budget b : budgets.values()) {
            try {
                if (held.contains(b.runId)) {
                    b.renew();
                } else {
                    b.release();
                }
            } catch (RuntimeException e) {
                LOG.warn("cannot renew the budget grant of run {}: {}", b.runId, e.getMessage());
            }
        }
    }

    /** How long a stopping worker waits for its cancelled calls to be settled before it releases its grants. */
    private static final Duration STOP_WAIT = Duration.ofSeconds(10);

    /**
     * Releases every grant (the worker stops), once its calls in flight were settled (at most {@link #STOP_WAIT}); a
     * grant that still has a call in flight then is left to expire, and is counted as spent whole.
     */
    void releaseAll() {
        ahead.shutdownNow();
        long deadline = System.nanoTime() + STOP_WAIT.toNanos();
        budgets.values().forEach(b -> b.awaitIdle(deadline));
        heartbeat(Set.of());
    }

    private static boolean zero(Amount a) {
        return a.costUsd().signum() == 0 && a.tokens() == 0;
    }

    /** One run's budget on this worker: its grant, settled use and calls in flight. */
    private final class Budget implements ChatLimiter {
        final UUID runId;
        final BudgetTable.Limits limits;
        final Pricing pricing;
        /** The run's highest price of a token (any model, input, cached or output). */
        final BigDecimal tokenPrice;
        /** Held while a grant is grown or released: one control transaction at a time per run. */
        final ReentrantLock grants = new ReentrantLock();
        /** Whether a growth ahead of need is queued or running. */
        final AtomicBoolean growing = new AtomicBoolean();
        // Guarded by this: the grant as the control database holds it, the settled use, the calls in flight.
        Amount granted = Amount.ZERO;
        Amount used = Amount.ZERO;
        Amount inFlight = Amount.ZERO;

        Budget(UUID runId, BudgetTable.Limits limits, Pricing pricing) {
            this.runId = runId;
            this.limits = limits;
            this.pricing = pricing;
            BigDecimal max = BigDecimal.ZERO;
            for (Pricing.Price p : pricing.prices().values()) {
                max = max.max(p.input()).max(p.output()).max(p.cachedInput());
            }
            this.tokenPrice = max.divide(MILLION);
        }

        @Override
        public Duration reserve(ChatCall call) {
            Amount need = estimate(call);
            if (take(need)) {
                if (running(need) && growing.compareAndSet(false, true)) {
                    // Fewer than a few calls of this size left: grow the grant beside the calls (one growth queued at
                    // a time), so that the next ones find room without waiting for the control database.
                    try {
                        ahead.execute(() -> growAhead(need));
                    } catch (RejectedExecutionException stopped) {
                        growing.set(false); // the worker stops: the call's own reservation stands
                    }
                }
                return Duration.ZERO;
            }
            grants.lock();
            try {
                while (!take(need)) {
                    Amount want;
                    Amount usedNow;
                    synchronized (this) {
                        want = atLeastGranted(need);
                        usedNow = used;
                    }
                    Amount batch = batch(need);
                    Optional<Amount> grown = placements.control().inTransaction(h -> {
                        BudgetTable.create(h, runId, limits);
                        return BudgetTable.grant(h, runId, worker, usedNow, want, batch, ttl);
                    });
                    if (grown.isEmpty()) {
                        LOG.warn("run {}: its budget cannot cover the next model call; pausing it", runId);
                        onExhausted.accept(runId);
                        throw new CancelledException("run " + runId + "'s budget cannot cover its next model call; the"
                                + " run is paused for its budget (`vigilo run resume " + runId
                                + " --budget-usd N` raises it)");
                    }
                    synchronized (this) {
                        granted = grown.get();
                    }
                }
                return Duration.ZERO;
            } finally {
                grants.unlock();
            }
        }

        @Override
        public void settle(ChatCall call, ChatExchange exchange) {
            Amount reserved = estimate(call);
            Amount spent = spent(exchange, reserved);
            synchronized (this) {
                inFlight = inFlight.minus(reserved);
                used = used.plus(spent);
                notifyAll(); // a stopping worker may wait for its last calls before it releases (awaitIdle)
            }
        }

        /**
         * Waits until no call of this run is in flight on this worker, at most until {@code deadline} (System.nanoTime):
         * a call cancelled as the worker stops is settled on the client's thread, possibly just after the chunks ended,
         * and a grant with a call in flight cannot be released. Keeps the caller's interrupt status.
         */
        synchronized void awaitIdle(long deadline) {
            boolean interrupted = Thread.interrupted();
            try {
                while (!zero(inFlight)) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return;
                    }
                    try {
                        wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** Whether the grant's free part holds fewer than {@link #AHEAD} more calls of {@code need}'s size. */
        private synchronized boolean running(Amount need) {
            Amount free = granted.minus(used).minus(inFlight);
            BigDecimal ahead = BigDecimal.valueOf(AHEAD);
            boolean cost = limits.maxCostUsd().isPresent()
                    && free.costUsd().compareTo(need.costUsd().multiply(ahead)) < 0;
            boolean tokens = limits.maxTokens().isPresent() && free.tokens() < need.tokens() * AHEAD;
            return cost || tokens;
        }

        /**
         * Grows the grant ahead of need, on the budget thread, unless a grower is at work; never shrinks it (calls
         * take from the grant meanwhile) and never pauses the run (the call that does not fit decides that).
         */
        private void growAhead(Amount need) {
            if (!grants.tryLock()) {
                growing.set(false);
                return;
            }
            try {
                Amount want;
                Amount usedNow;
                synchronized (this) {
                    if (zero(granted)) {
                        // Released (or never granted) since this growth was queued: growing ahead only extends a
                        // grant this worker holds. Creating one here would leave a grant no call uses, reserved until
                        // it expired and then counted as spent.
                        return;
                    }
                    want = atLeastGranted(need);
                    usedNow = used;
                }
                Amount batch = batch(need);
                placements
                        .control()
                        .inTransaction(h -> BudgetTable.grant(h, runId, worker, usedNow, want, batch, ttl))
                        .ifPresent(g -> {
                            synchronized (this) {
                                granted = g;
                            }
                        });
            } catch (RuntimeException e) {
                LOG.debug("run {}: growing the budget grant ahead failed: {}", runId, e.getMessage());
            } finally {
                grants.unlock();
                growing.set(false);
            }
        }

        /**
         * What a grown grant must cover: what is used and in flight plus {@code need}, and never less than the grant
         * now in any dimension (calls keep taking from it while it grows, so it must not shrink). Call holding this.
         */
        private Amount atLeastGranted(Amount need) {
            Amount committed = used.plus(inFlight).plus(need);
            return new Amount(
                    committed.costUsd().max(granted.costUsd()), Math.max(committed.tokens(), granted.tokens()));
        }

        /** Takes {@code need} from the grant when it covers it (every limited dimension). */
        private synchronized boolean take(Amount need) {
            Amount free = granted.minus(used).minus(inFlight);
            boolean cost = limits.maxCostUsd().isEmpty() || need.costUsd().compareTo(free.costUsd()) <= 0;
            boolean tokens = limits.maxTokens().isEmpty() || need.tokens() <= free.tokens();
            if (cost && tokens) {
                inFlight = inFlight.plus(need);
                return true;
            }
            return false;
        }

        private Amount estimate(ChatCall call) {
            long tokens = call.tokenEstimate();
            return new Amount(tokenPrice.multiply(BigDecimal.valueOf(tokens)), tokens);
        }

        private Amount batch(Amount need) {
            BigDecimal cost = need.costUsd().multiply(BigDecimal.valueOf(BATCH_CALLS));
            long tokens = need.tokens() * BATCH_CALLS;
            if (limits.maxCostUsd().isPresent()) {
                cost = cost.min(
                        limits.maxCostUsd().get().divide(BigDecimal.valueOf(BATCH_SHARE), 12, RoundingMode.DOWN));
            }
            if (limits.maxTokens().isPresent()) {
                tokens = Math.min(tokens, limits.maxTokens().get() / BATCH_SHARE);
            }
            return new Amount(cost, tokens);
        }

        /**
         * What a call that ended with {@code x} spent: what its answer reports; nothing when the endpoint surely did
         * not answer it (no connection, a refused or failed request without usage); its whole reservation when it may
         * have been answered without our learning its usage.
         */
        private Amount spent(ChatExchange x, Amount reserved) {
            Optional<Usage> usage = x.json().flatMap(j -> Usage.of(j.get("usage")));
            if (usage.isPresent()) {
                Usage u = usage.get();
                long tokens = u.promptTokens() + u.completionTokens();
                String model = x.json().get().path("model").asText("");
                BigDecimal cost = pricing.price(model)
                        .map(p -> p.cost(u.promptTokens(), u.cachedPromptTokens(), u.completionTokens()))
                        .orElse(tokenPrice.multiply(BigDecimal.valueOf(tokens)));
                return new Amount(cost, tokens);
            }
            return switch (x.outcome()) {
                case CONNECT_FAILED, CONNECT_TIMEOUT, INVALID_CALL, RATE_LIMITED, REJECTED, RETRYABLE_STATUS ->
                    Amount.ZERO;
                default -> reserved;
            };
        }

        /** Publishes the settled use and renews the grant; a grant folded as expired is forgotten (counted whole). */
        void renew() {
            Amount usedNow;
            synchronized (this) {
                if (zero(granted) && zero(used)) {
                    return;
                }
                usedNow = used;
            }
            boolean live = placements.control().inTransaction(h -> BudgetTable.renew(h, runId, worker, usedNow, ttl));
            if (!live) {
                LOG.warn("run {}: this worker's budget grant expired and was counted as spent whole", runId);
                synchronized (this) {
                    granted = Amount.ZERO;
                    used = used.minus(usedNow);
                }
            }
        }

        /** Releases the grant when no call is in flight: its settled use becomes spent, the rest is free again. */
        void release() {
            grants.lock();
            try {
                Amount usedNow;
                synchronized (this) {
                    if (!zero(inFlight) || zero(granted) && zero(used)) {
                        return;
                    }
                    usedNow = used;
                    // First, so no call takes from the grant being released: they wait for a new one.
                    granted = Amount.ZERO;
                }
                placements.control().useTransaction(h -> BudgetTable.release(h, runId, worker, usedNow));
                synchronized (this) {
                    used = used.minus(usedNow);
                }
            } finally {
                grants.unlock();
            }
        }
    }
}
