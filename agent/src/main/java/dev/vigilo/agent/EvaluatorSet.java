package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.llm.ChatCompletions;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The evaluators of a run, in evaluator-plan order (index {@code i} is bit {@code i} of a chunk's evaluator mask),
 * built by {@link Evaluators#fromPlan}. Thread-safe: concurrent cases may evaluate at once.
 *
 * <p>Evaluating never throws for a failure of an evaluator (missing expected, bad pattern, crash, bad score,
 * timeout): that is an {@link EvaluatorResult.Status#ERROR} result, whose message has the run's secret values masked
 * (a command evaluator inherits them and may print them, an endpoint may echo a judge's key). A reason, and a panel's
 * judges' votes' reasons, are masked the same way and bounded to
 * {@link EvaluatorResult#MAX_REASON_BYTES}. Cancellation is by thread interruption, as for
 * agents: a running command evaluator is killed, a regex match stops, a judge's request is aborted, and the result is
 * {@link EvaluatorErrorType#CANCELLED} with the thread's interrupt status still set.
 *
 * <p>A set with judges or panels holds the one HTTP client they share: {@link #close()} it when the run's
 * evaluations have ended, as the run's agent is closed.
 */
public final class EvaluatorSet implements AutoCloseable {
    private final List<String> names;
    private final List<String> kinds;
    private final List<Evaluator> evaluators;
    private final SecretValues secrets;
    private final Optional<ChatCompletions> judgeClient;

    EvaluatorSet(List<String> names, List<String> kinds, List<Evaluator> evaluators, SecretValues secrets) {
        this(names, kinds, evaluators, secrets, Optional.empty());
    }

    EvaluatorSet(
            List<String> names,
            List<String> kinds,
            List<Evaluator> evaluators,
            SecretValues secrets,
            Optional<ChatCompletions> judgeClient) {
        this.names = List.copyOf(names);
        this.kinds = List.copyOf(kinds);
        this.evaluators = List.copyOf(evaluators);
        this.secrets = secrets;
        this.judgeClient = judgeClient;
    }

    /**
     * Releases the judges' HTTP client (its threads and connections), if the set has judges; evaluations must have
     * ended before. Idempotent.
     */
    @Override
    public void close() {
        judgeClient.ifPresent(ChatCompletions::close);
    }

    /** How many evaluators the plan has (at most 64). */
    public int size() {
        return evaluators.size();
    }

    /** The name of evaluator {@code index}. */
    public String name(int index) {
        return names.get(index);
    }

    /**
     * The kind of evaluator {@code index} ({@code exact_match}, {@code contains}, {@code regex}, {@code command},
     * {@code json}, {@code numeric}, {@code similarity}, {@code judge}, {@code panel}).
     */
    public String kind(int index) {
        return kinds.get(index);
    }

    /** Evaluator kinds that hold their thread while they run (a process): the others may run on a short-step pool. */
    private static final java.util.Set<String> HOLDING_A_THREAD = java.util.Set.of("command");

    /**
     * Whether {@link #evaluateAsync} needs no thread that may block: true unless an evaluator runs a process
     * ({@code command}). Judges and panels wait for their models without a thread; the other kinds are short steps.
     */
    public boolean waitsWithoutThreads() {
        return kinds.stream().noneMatch(HOLDING_A_THREAD::contains);
    }

    /**
     * As {@link #evaluate(long, CaseRecord, String, EvaluationContext)}, without holding a thread while a judge's
     * model answers (docs/execution.md, "Calls in flight"): the evaluators run one after another, each judge's
     * attempts sent asynchronously and their answers handled on {@code work}, the other evaluators on the thread
     * that completed the one before (the caller's or {@code work}'s). Only for a set that {@link
     * #waitsWithoutThreads}. Cancelling the future cancels the judge call in flight; an evaluation that threw fails
     * it.
     */
    public CompletableFuture<List<EvaluatorResult>> evaluateAsync(
            long mask, CaseRecord caseRecord, String output, EvaluationContext context, Executor work) {
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(work, "work");
        if (size() < 64 && (mask >>> size()) != 0) {
            throw new IllegalArgumentException("evaluator mask " + Long.toHexString(mask)
                    + " selects evaluators the plan (" + size() + " evaluators) does not have");
        }
        Objects.requireNonNull(output, "output");
        JsonNode tree = tree(caseRecord);
        List<EvaluatorResult> results = new ArrayList<>();
        return SequentialAsync.run(new SequentialAsync.Steps<Evaluator.Verdict, List<EvaluatorResult>>() {
            /** The evaluator of the step in flight, and when it started. */
            private int index = -1;

            private long start;

            @Override
            public CompletableFuture<Evaluator.Verdict> next() {
                int i = index + 1;
                while (i < size() && (mask & (1L << i)) == 0) {
                    i++;
                }
                if (i >= size()) {
                    return null;
                }
                index = i;
                start = System.nanoTime();
                return evaluators.get(i).evaluateAsync(caseRecord, tree, output, context, work);
            }

            @Override
            public boolean accept(Evaluator.Verdict v) {
                EvaluatorResult r = EvaluatorSet.this.result(index, v, start);
                results.add(r);
                return !r.cancelled(); // a cancelled evaluation is the last result
            }

            @Override
            public List<EvaluatorResult> result() {
                return results;
            }
        });
    }

    /**
     * Runs exactly the evaluators whose bits are set in {@code mask}, in index order, on one output. Stops after a
     * cancelled evaluation (which is then the last result).
     *
     * @param mask       bit {@code i} selects evaluator {@code i}; no bit at or above {@link #size()} may be set
     * @param caseRecord the case the output answers
     * @param output     the agent's output
     * @throws IllegalArgumentException if the mask names an evaluator the plan does not have
     * @throws InvalidInputException if the case is not a JSON object (it was verified when stored, so this means
     *     damage)
     */
    public List<EvaluatorResult> evaluate(long mask, CaseRecord caseRecord, String output) {
        return evaluate(mask, caseRecord, output, EvaluationContext.NONE);
    }

    /**
     * As {@link #evaluate(long, CaseRecord, String)}, with what evaluators may know of the agent call and the
     * observer of their model calls.
     */
    public List<EvaluatorResult> evaluate(long mask, CaseRecord caseRecord, String output, EvaluationContext context) {
        Objects.requireNonNull(context, "context");
        if (size() < 64 && (mask >>> size()) != 0) {
            throw new IllegalArgumentException("evaluator mask " + Long.toHexString(mask)
                    + " selects evaluators the plan (" + size() + " evaluators) does not have");
        }
        Objects.requireNonNull(output, "output");
        JsonNode tree = tree(caseRecord);
        List<EvaluatorResult> results = new ArrayList<>(Long.bitCount(mask));
        for (int i = 0; i < size(); i++) {
            if ((mask & (1L << i)) != 0) {
                EvaluatorResult r = evaluate(i, caseRecord, tree, output, context);
                results.add(r);
                if (r.cancelled()) {
                    break;
                }
            }
        }
        return results;
    }

    /** Runs evaluator {@code index} on one output; see {@link #evaluate(long, CaseRecord, String)}. */
    public EvaluatorResult evaluate(int index, CaseRecord caseRecord, String output) {
        Objects.checkIndex(index, size());
        Objects.requireNonNull(output, "output");
        return evaluate(index, caseRecord, tree(caseRecord), output, EvaluationContext.NONE);
    }

    private EvaluatorResult evaluate(
            int index, CaseRecord caseRecord, JsonNode tree, String output, EvaluationContext context) {
        long start = System.nanoTime();
        Evaluator.Verdict v;
        if (Thread.currentThread().isInterrupted()) {
            v = Evaluator.Verdict.error(
                    EvaluatorErrorType.CANCELLED,
                    "evaluator \"" + names.get(index) + "\" was not run: the worker was interrupted");
        } else {
            v = evaluators.get(index).evaluate(caseRecord, tree, output, context);
        }
        return result(index, v, start);
    }

    /** Evaluator {@code index}'s verdict, begun at {@code start}, stamped, its texts masked and bounded. */
    private EvaluatorResult result(int index, Evaluator.Verdict v, long start) {
        List<JudgeVote> votes = v.votes().stream()
                .map(vote ->
                        new JudgeVote(vote.judge(), vote.score(), vote.reason().map(r -> Reasons.bound(r, secrets))))
                .toList();
        if (v.error().isPresent()) {
            EvaluatorError e = v.error().get();
            v = Evaluator.Verdict.error(e.type(), secrets.mask(e.message())).withUsage(v.usage());
        }
        EvaluatorResult.Status status = v.error().isPresent()
                ? EvaluatorResult.Status.ERROR
                : v.passed() ? EvaluatorResult.Status.PASSED : EvaluatorResult.Status.FAILED;
        Optional<String> reason =
                v.error().isPresent() ? Optional.empty() : v.reason().map(r -> Reasons.bound(r, secrets));
        return new EvaluatorResult(
                index,
                names.get(index),
                status,
                v.error().isPresent() ? 0 : v.score(),
                v.error(),
                Duration.ofNanos(System.nanoTime() - start),
                reason,
                v.usage(),
                votes);
    }

    private static JsonNode tree(CaseRecord c) {
        try {
            JsonNode tree = Json.parse(c.json());
            if (tree.isObject()) {
                return tree;
            }
        } catch (IOException e) {
            throw new InvalidInputException("case \"" + Texts.oneLine(c.id(), 80) + "\" is not valid JSON ("
                    + Json.problem(e) + "); verify the dataset");
        }
        throw new InvalidInputException(
                "case \"" + Texts.oneLine(c.id(), 80) + "\" is not a JSON object; verify the dataset");
    }

    @Override
    public String toString() {
        return "EvaluatorSet" + names;
    }
}
