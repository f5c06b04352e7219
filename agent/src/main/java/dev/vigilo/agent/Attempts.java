package dev.vigilo.agent;

import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.common.retry.RetryPolicy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The retry loop shared by both agent kinds: runs attempts under a {@link RetryPolicy} (full-jitter exponential
 * backoff), retrying only {@link AgentError#retryable()} failures, honouring a server's retry-after hint, and turns
 * the last attempt into an {@link AgentOutcome}. It is also where nothing leaves an agent unmasked: each attempt sees
 * its observer through a {@link MaskingObserver}, and each attempt's output and error message are masked with the
 * environment's secrets before anything else sees them. Stateless apart from the policy and the secrets.
 */
final class Attempts {
    private final RetryPolicy policy;
    private final SecretValues secrets;

    Attempts(int maxAttempts, AgentEnvironment env) {
        // Only the attempt count and the back-off bounds are used: the retry decision is the attempt's error's.
        this.policy = RetryPolicy.of(maxAttempts, env.initialBackoff(), env.maxBackoff());
        this.secrets = env.secrets();
    }

    int maxAttempts() {
        return policy.maxAttempts();
    }

    /**
     * What one attempt produced: an output or an error (with an optional wait hint), the usage of each of its model
     * calls, and the tool calls it made.
     */
    record Result(
            Optional<String> output,
            List<TokenUsage> usage,
            Optional<AgentError> error,
            Duration retryAfter,
            boolean cached,
            List<AgentToolCall> toolCalls) {
        Result {
            usage = List.copyOf(usage);
            toolCalls = List.copyOf(toolCalls);
        }

        Result(Optional<String> output, List<TokenUsage> usage, Optional<AgentError> error, Duration retryAfter) {
            this(output, usage, error, retryAfter, false, List.of());
        }

        static Result ok(String output) {
            return new Result(Optional.of(output), List.of(), Optional.empty(), Duration.ZERO);
        }

        /** This (answered) result marked as an earlier answer from the cache. */
        Result fromCache() {
            return new Result(output, usage, error, retryAfter, true, toolCalls);
        }

        static Result failed(AgentError error) {
            return failed(error, Duration.ZERO);
        }

        static Result failed(AgentError error, Duration retryAfter) {
            return new Result(Optional.empty(), List.of(), Optional.of(error), retryAfter);
        }

        /** This result with the usage its answer reported (a failed attempt's answer too: its tokens were paid). */
        Result withUsage(Optional<TokenUsage> u) {
            return withUsage(u.map(List::of).orElse(List.of()));
        }

        /** This result with the usage of each of the attempt's model calls. */
        Result withUsage(List<TokenUsage> u) {
            return new Result(output, u, error, retryAfter, cached, toolCalls);
        }

        /** This result with the tool calls the attempt made. */
        Result withToolCalls(List<AgentToolCall> calls) {
            return new Result(output, usage, error, retryAfter, cached, calls);
        }

        /** The usage of the attempt's last model call (the one that answered), if it reported one. */
        Optional<TokenUsage> lastUsage() {
            return usage.isEmpty() ? Optional.empty() : Optional.of(usage.get(usage.size() - 1));
        }
    }

    /**
     * One attempt; {@code attempt} is 1-based; {@code observer} is the call's, masking; {@code timeLeft} is the most
     * the attempt may take before the case's {@code case_seconds} runs out (the agent bounds its own timeout by it),
     * {@link #UNLIMITED} without that limit.
     */
    @FunctionalInterface
    interface Body {
        Result attempt(int attempt, AgentObserver observer, Duration timeLeft);
    }

    /** The time left of a call without {@code case_seconds}. */
    static final Duration UNLIMITED = Duration.ofDays(365);

    AgentOutcome run(AgentObserver callObserver, Body body) {
        return run(callObserver, CaseBudget.NONE, body);
    }

    /**
     * Runs the attempts within {@code budget}: no attempt starts after its time is up, each attempt's time is bounded
     * by what is left (an attempt stopped by it ends {@link AgentErrorType#LIMIT_EXCEEDED}), and the calls' tokens
     * and cost are checked after every attempt (an attempt that takes them over ends the call the same way, its
     * output, if any, dropped).
     *
     * <p>This is {@link #runAsync} with the calling thread as its work pool: every attempt's body, its result's
     * handling and the retry decision run on the calling thread, which waits for the retry timer in between. So both
     * loops are one sequence. An interrupted calling thread cancels the call: an attempt that sees the interrupt ends
     * {@link AgentErrorType#CANCELLED} (a child process is killed, a request aborted), no further attempt starts, an
     * interrupt while waiting to retry ends the call cancelled with the last attempt's error named, and the thread's
     * interrupt status is set again whenever the call ends cancelled. A body that throws throws out of this method.
     */
    AgentOutcome run(AgentObserver callObserver, CaseBudget budget, Body body) {
        CallerRuns here = new CallerRuns();
        AsyncRun r = new AsyncRun(MaskingObserver.of(callObserver, secrets), budget, here, (n, observer, left) -> {
            try {
                return CompletableFuture.completedFuture(body.attempt(n, observer, left));
            } catch (RuntimeException | Error e) {
                return CompletableFuture.failedFuture(e);
            }
        });
        r.next(1);
        try {
            here.runUntil(r.outcome);
        } catch (InterruptedException e) {
            // Only the wait before a retry takes no task at once: the interrupt came while waiting to retry.
            r.cancelWaiting();
        }
        AgentOutcome outcome;
        try {
            outcome = r.outcome.getNow(null);
        } catch (CompletionException e) {
            Throwable cause = Futures.cause(e);
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        }
        if (outcome.error().map(er -> er.type() == AgentErrorType.CANCELLED).orElse(false)) {
            // The interrupt (or the refusal) that cancelled the call is for the caller to see.
            Thread.currentThread().interrupt();
        }
        return outcome;
    }

    /**
     * The blocking loop's "work pool": the calling thread of {@link #run} runs its tasks, in order, until the call's
     * outcome is done. The retry timer hands the next attempt here from its own thread.
     */
    private static final class CallerRuns implements Executor {
        private final LinkedBlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();

        @Override
        public void execute(Runnable task) {
            tasks.add(task);
        }

        /**
         * Runs tasks until {@code done}. A task already queued runs even if the thread was interrupted (an attempt's
         * result is recorded as it was before); only waiting for a task that is not there yet (a retry timer) is
         * interrupted.
         */
        void runUntil(CompletableFuture<?> done) throws InterruptedException {
            while (!done.isDone()) {
                Runnable task = tasks.poll();
                (task != null ? task : tasks.take()).run();
            }
        }
    }

    /**
     * One attempt that does not hold a thread while it waits (an HTTP request in flight): as {@link Body}, its result
     * a future. Cancelling the future must stop what the attempt has in flight.
     */
    @FunctionalInterface
    interface AsyncBody {
        CompletableFuture<Result> attempt(int attempt, AgentObserver observer, Duration timeLeft);
    }

    /**
     * As {@link #run(AgentObserver, CaseBudget, Body)}, without holding a thread between attempts or while one is in
     * flight (docs/execution.md, "Calls in flight"): each attempt's result is handled on {@code work} (masking, the
     * observer's attempt end, which writes its transcript), the wait before a retry is a timer. Cancelling the
     * returned future cancels the attempt in flight (the future then ends cancelled, not with an outcome). An
     * attempt whose body throws fails the future with that exception, as {@link #run} would throw it.
     */
    CompletableFuture<AgentOutcome> runAsync(
            AgentObserver callObserver, CaseBudget budget, Executor work, AsyncBody body) {
        AsyncRun r = new AsyncRun(MaskingObserver.of(callObserver, secrets), budget, work, body);
        r.next(1);
        return r.outcome;
    }

    /** The state of one {@link #runAsync} call; its attempts run one after another, so its lists need no lock. */
    private final class AsyncRun {
        final CompletableFuture<AgentOutcome> outcome = new CompletableFuture<>();
        final AtomicReference<CompletableFuture<Result>> inFlight = new AtomicReference<>();
        final AgentObserver observer;
        final CaseBudget budget;
        final Executor work;
        final AsyncBody body;
        final long start = System.nanoTime();
        final List<AgentAttempt> attempts = new ArrayList<>();
        final List<TokenUsage> used = new ArrayList<>();

        AsyncRun(AgentObserver observer, CaseBudget budget, Executor work, AsyncBody body) {
            this.observer = observer;
            this.budget = budget;
            this.work = work;
            this.body = body;
            outcome.whenComplete((o, t) -> {
                CompletableFuture<Result> f = inFlight.get();
                if (outcome.isCancelled() && f != null) {
                    f.cancel(true);
                }
            });
        }

        void next(int n) {
            if (outcome.isDone()) {
                return;
            }
            try {
                Instant started = Instant.now();
                long t0 = System.nanoTime();
                observer.onAttemptStart(n);
                Duration left = budget.time().map(t -> t.minus(since(start))).orElse(UNLIMITED);
                CompletableFuture<Result> f;
                if (Thread.currentThread().isInterrupted()) {
                    // Only the blocking loop's thread is ever interrupted (the work pool's never are).
                    f = CompletableFuture.completedFuture(Result.failed(
                            AgentError.of(AgentErrorType.CANCELLED, "not started: the worker was interrupted")));
                } else if (left.isNegative() || left.isZero()) {
                    f = CompletableFuture.completedFuture(Result.failed(budget.timeExceeded(since(start), n)));
                } else {
                    f = body.attempt(n, observer, left);
                }
                inFlight.set(f);
                if (outcome.isCancelled()) {
                    f.cancel(true);
                    return;
                }
                f.whenCompleteAsync(
                        (r, failure) -> {
                            if (outcome.isDone()) {
                                return;
                            }
                            if (failure != null) {
                                outcome.completeExceptionally(Futures.cause(failure));
                                return;
                            }
                            try {
                                ended(n, started, t0, r);
                            } catch (RuntimeException | Error e) {
                                outcome.completeExceptionally(e);
                            }
                        },
                        work);
            } catch (RuntimeException | Error e) {
                outcome.completeExceptionally(e);
            }
        }

        /** The calling thread of the blocking loop was interrupted while waiting to retry: the call ends cancelled. */
        void cancelWaiting() {
            String last = attempts.isEmpty()
                    ? ""
                    : attempts.get(attempts.size() - 1)
                            .error()
                            .map(e -> "; the last attempt failed: " + e.message())
                            .orElse("");
            outcome.complete(failed(
                    AgentError.of(
                            AgentErrorType.CANCELLED,
                            "cancelled while waiting to retry (the worker was interrupted)" + last),
                    attempts,
                    start));
        }

        private void ended(int n, Instant started, long t0, Result result) {
            Result r = limited(masked(result), budget, start, n, used);
            AgentAttempt a =
                    new AgentAttempt(n, started, Duration.ofNanos(System.nanoTime() - t0), r.error(), r.usage());
            attempts.add(a);
            observer.onAttemptEnd(a);
            if (r.error().isEmpty()) {
                outcome.complete(succeeded(r, attempts, start));
                return;
            }
            AgentError e = r.error().get();
            if (!e.retryable() || n >= policy.maxAttempts()) {
                outcome.complete(failed(e, attempts, start));
                return;
            }
            // The server's retry-after hint, then the policy's full-jitter back-off; a timer (the blocking loop's
            // thread waits for it).
            long bound = policy.backoffBound(n + 1).toNanos();
            long wait = r.retryAfter().toNanos()
                    + (bound == 0 ? 0 : ThreadLocalRandom.current().nextLong(bound + 1));
            if (wait <= 0) {
                work.execute(() -> next(n + 1));
            } else {
                CompletableFuture.delayedExecutor(wait, TimeUnit.NANOSECONDS, work)
                        .execute(() -> next(n + 1));
            }
        }
    }

    /**
     * {@code r} held to the budget: a timeout once the case's time is up is the limit's error, and tokens over a
     * limit end the call (the attempt's usage kept: it was paid).
     */
    private static Result limited(Result r, CaseBudget budget, long start, int n, List<TokenUsage> used) {
        used.addAll(r.usage());
        if (r.error().isPresent()
                && r.error().get().type() == AgentErrorType.TIMEOUT
                && budget.time().isPresent()
                && since(start).compareTo(budget.time().get()) >= 0) {
            return Result.failed(budget.timeExceeded(since(start), n)).withUsage(r.usage());
        }
        Optional<String> over = budget.exceededBy(used);
        if (over.isPresent() && (r.error().isEmpty() || r.error().get().type() != AgentErrorType.CANCELLED)) {
            return Result.failed(new AgentError(
                            AgentErrorType.LIMIT_EXCEEDED, over.get() + "; stopped after attempt " + n, false))
                    .withUsage(r.usage());
        }
        return r;
    }

    /** {@code r} with its output and error message masked; an output masking made too large is an error. */
    private Result masked(Result r) {
        if (secrets.isEmpty()) {
            return r;
        }
        if (r.error().isPresent()) {
            AgentError e = r.error().get();
            return Result.failed(new AgentError(e.type(), secrets.mask(e.message()), e.retryable()), r.retryAfter())
                    .withUsage(r.usage());
        }
        r = r.withToolCalls(r.toolCalls().stream()
                .map(c -> new AgentToolCall(secrets.mask(c.id()), secrets.mask(c.name()), secrets.mask(c.arguments())))
                .toList());
        String output = r.output().orElseThrow();
        String masked = secrets.mask(output);
        if (masked.equals(output)) {
            return r;
        }
        int size = CommandAgent.utf8Length(masked);
        if (size > Agent.MAX_OUTPUT_BYTES) {
            // A value shorter than the mask, masked many times, can lengthen an output past the bound.
            return Result.failed(AgentError.of(
                            AgentErrorType.OUTPUT_TOO_LARGE,
                            "the agent's output is " + size
                                    + " bytes after masking its secret values; an output may be at" + " most "
                                    + Texts.bytes(Agent.MAX_OUTPUT_BYTES)))
                    .withUsage(r.usage());
        }
        return new Result(Optional.of(masked), r.usage(), Optional.empty(), r.retryAfter(), r.cached(), r.toolCalls());
    }

    /** The outcome of a call whose last attempt ended with {@code error}. */
    private static AgentOutcome failed(AgentError error, List<AgentAttempt> attempts, long start) {
        return new AgentOutcome(
                AgentOutcome.Status.ERROR,
                Optional.empty(),
                Optional.of(error),
                attempts,
                since(start),
                Optional.empty());
    }

    /** The outcome of a call whose attempt {@code ok} gave an output. */
    private static AgentOutcome succeeded(Result ok, List<AgentAttempt> attempts, long start) {
        return new AgentOutcome(
                AgentOutcome.Status.OK,
                ok.output(),
                Optional.empty(),
                attempts,
                since(start),
                ok.lastUsage(),
                ok.cached(),
                ok.toolCalls());
    }

    private static Duration since(long start) {
        return Duration.ofNanos(System.nanoTime() - start);
    }
}
