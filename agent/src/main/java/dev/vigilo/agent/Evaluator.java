package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/** One evaluator of an evaluator plan; package-private: {@link EvaluatorSet} is the public face. Thread-safe. */
interface Evaluator {
    /**
     * Judges {@code output} for the case.
     *
     * @param caseRecord the case as stored
     * @param caseTree   the same case parsed
     * @param output     the agent's output
     */
    Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output);

    /**
     * Judges {@code output} knowing the agent call's time and tokens, reporting model calls to the context's
     * observer; evaluators that need neither leave this default.
     */
    default Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output, EvaluationContext context) {
        return evaluate(caseRecord, caseTree, output);
    }

    /**
     * As {@link #evaluate(CaseRecord, JsonNode, String, EvaluationContext)}, without holding a thread while a model
     * answers (docs/execution.md, "Calls in flight"): evaluators that call a model (judges, panels) send
     * asynchronously and handle the answer on {@code work}; the others judge on the calling thread, which must then
     * be one that may run them ({@link EvaluatorSet#waitsWithoutThreads}). Cancelling the future cancels the model
     * call in flight. A verdict that threw fails the future with it.
     */
    default CompletableFuture<Verdict> evaluateAsync(
            CaseRecord caseRecord, JsonNode caseTree, String output, EvaluationContext context, Executor work) {
        try {
            return CompletableFuture.completedFuture(evaluate(caseRecord, caseTree, output, context));
        } catch (RuntimeException | Error e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * A judgement before it is stamped with index, name and time, and before {@link EvaluatorSet} masks and bounds
     * its texts (quotes of longer texts in a reason are masked where they are cut: {@link Reasons}).
     */
    record Verdict(
            boolean passed,
            double score,
            Optional<EvaluatorError> error,
            Optional<String> reason,
            List<TokenUsage> usage,
            List<JudgeVote> votes) {
        public Verdict {
            usage = List.copyOf(usage);
            votes = List.copyOf(votes);
        }

        /** A verdict without votes (every evaluator but a panel). */
        public Verdict(
                boolean passed,
                double score,
                Optional<EvaluatorError> error,
                Optional<String> reason,
                List<TokenUsage> usage) {
            this(passed, score, error, reason, usage, List.of());
        }

        /** A verdict of an evaluator that calls no model. */
        public Verdict(boolean passed, double score, Optional<EvaluatorError> error, Optional<String> reason) {
            this(passed, score, error, reason, List.of(), List.of());
        }

        /** Passed with score 1 or failed with score 0, and why. */
        static Verdict of(boolean passed, String reason) {
            return new Verdict(passed, passed ? 1 : 0, Optional.empty(), Optional.of(reason));
        }

        static Verdict error(EvaluatorErrorType type, String message) {
            return new Verdict(false, 0, Optional.of(new EvaluatorError(type, message)), Optional.empty());
        }

        /** This verdict with the tokens of the model calls that produced it. */
        Verdict withUsage(List<TokenUsage> u) {
            return new Verdict(passed, score, error, reason, u, votes);
        }

        /** This verdict with a panel's votes. */
        Verdict withVotes(List<JudgeVote> v) {
            return new Verdict(passed, score, error, reason, usage, v);
        }
    }

    /** The case's {@code expected} as text: a string as is, any other JSON value as its compact JSON text. */
    static Optional<String> expectedText(JsonNode caseTree) {
        JsonNode e = caseTree.get("expected");
        if (e == null || e.isNull()) {
            return Optional.empty();
        }
        return Optional.of(e.isTextual() ? e.asText() : Json.text(e));
    }
}
