package dev.vigilo.agent;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One evaluator's judgement of one output.
 *
 * @param index   the evaluator's index in the evaluator plan (its bit in a chunk's evaluator mask)
 * @param name    the evaluator's name
 * @param status  passed, failed, or error
 * @param score   in [0, 1]: 1 or 0 for exact_match, contains and regex, the printed score for command, 0 on error
 * @param error   why it could not judge; present iff status is ERROR
 * @param elapsed how long the evaluation took
 */
public record EvaluatorResult(
        int index, String name, Status status, double score, Optional<EvaluatorError> error, Duration elapsed) {

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
        if (!(score >= 0 && score <= 1)) {
            throw new IllegalArgumentException("score must be in [0, 1], got " + score);
        }
        if ((status == Status.ERROR) != error.isPresent()) {
            throw new IllegalArgumentException("an ERROR result, and only that, carries an error");
        }
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
