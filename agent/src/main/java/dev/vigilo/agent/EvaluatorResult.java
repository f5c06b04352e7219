package dev.vigilo.agent;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One evaluator's judgement of one output.
 *
 * @param index   the evaluator's index in the evaluator plan (its bit in a chunk's evaluator mask)
 * @param name    the evaluator's name
 * @param status  passed, failed, or error
 * @param score   in [0, 1]: 1 or 0 for exact_match, contains, regex, json and numeric, the similarity ratio for
 *     similarity, the printed score for command, the normalised score for judge, the aggregate for panel, 0 on
 *     error
 * @param error   why it could not judge; present iff status is ERROR
 * @param elapsed how long the evaluation took
 * @param reason  why the output passed or failed, in one line of at most {@link #MAX_REASON_BYTES} bytes of UTF-8
 *     with the run's secrets masked (docs/formats/agent-protocol.md, "Reasons"): always present on a result of a
 *     built-in evaluator, a judge's (the judge's own words) and a panel's, present on a command evaluator's when it
 *     printed one; never on an ERROR result (its error message says why)
 * @param usage   the tokens of every model call the evaluator made (a judge's attempts, failed ones included, in
 *     order); empty for evaluators that call no model
 * @param votes   a panel's judges' votes, in the panel's order (on an ERROR result too, as far as they got); empty
 *     for every other evaluator
 */
public record EvaluatorResult(
        int index,
        String name,
        Status status,
        double score,
        Optional<EvaluatorError> error,
        Duration elapsed,
        Optional<String> reason,
        List<TokenUsage> usage,
        List<JudgeVote> votes) {
    /** The most bytes of UTF-8 a reason has; a longer one is cut on a code point boundary and ends in "…". */
    public static final int MAX_REASON_BYTES = 2048;

    /** The judgement. */
    public enum Status {
        /** The output passed (for command: score >= pass_score). */
        PASSED,
        /** The output was judged and did not pass. */
        FAILED,
        /** The evaluator could not judge (see {@link #error()}). */
        ERROR
    }

    public EvaluatorResult {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(error, "error");
        Objects.requireNonNull(elapsed, "elapsed");
        Objects.requireNonNull(reason, "reason");
        usage = List.copyOf(usage);
        votes = List.copyOf(votes);
        if (!(score >= 0 && score <= 1)) {
            throw new IllegalArgumentException("score must be in [0, 1], got " + score);
        }
        if ((status == Status.ERROR) != error.isPresent()) {
            throw new IllegalArgumentException("an ERROR result, and only that, carries an error");
        }
        if (status == Status.ERROR && reason.isPresent()) {
            throw new IllegalArgumentException("an ERROR result carries no reason (its error says why)");
        }
        if (reason.isPresent() && Reasons.utf8Length(reason.get()) > MAX_REASON_BYTES) {
            throw new IllegalArgumentException("a reason has at most " + MAX_REASON_BYTES + " bytes of UTF-8");
        }
    }

    /** A result without votes (of any evaluator but a panel). */
    public EvaluatorResult(
            int index,
            String name,
            Status status,
            double score,
            Optional<EvaluatorError> error,
            Duration elapsed,
            Optional<String> reason,
            List<TokenUsage> usage) {
        this(index, name, status, score, error, elapsed, reason, usage, List.of());
    }

    /** A result without a reason (as results were before reasons existed). */
    public EvaluatorResult(
            int index, String name, Status status, double score, Optional<EvaluatorError> error, Duration elapsed) {
        this(index, name, status, score, error, elapsed, Optional.empty(), List.of(), List.of());
    }

    /** A result of an evaluator that calls no model. */
    public EvaluatorResult(
            int index,
            String name,
            Status status,
            double score,
            Optional<EvaluatorError> error,
            Duration elapsed,
            Optional<String> reason) {
        this(index, name, status, score, error, elapsed, reason, List.of(), List.of());
    }

    /** Whether the output passed. */
    public boolean passed() {
        return status == Status.PASSED;
    }

    /** Whether the evaluation was cut short by an interrupt (not a result of the case). */
    public boolean cancelled() {
        return error.map(e -> e.type() == EvaluatorErrorType.CANCELLED).orElse(false);
    }
}
