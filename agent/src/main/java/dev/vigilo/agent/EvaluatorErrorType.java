package dev.vigilo.agent;

/**
 * Why an evaluator could not judge an output. Each type has a short, stable snake_case {@link #code()}
 * (docs/formats/agent-protocol.md lists them). An evaluator error is a result of the case (the case is errored on a
 * gate that requires the evaluator), except {@link #CANCELLED}, which is not a result at all.
 */
public enum EvaluatorErrorType {
    /**
     * exact_match, contains, similarity, numeric, or regex without a pattern: the case has no (or a null)
     * {@code expected}.
     */
    MISSING_EXPECTED("missing_expected"),
    /** numeric: the case's {@code expected} is not a number (nor a string holding one number). */
    INVALID_EXPECTED("invalid_expected"),
    /** similarity: the output and {@code expected} are too long to compare in bounded time. */
    INPUT_TOO_LARGE("input_too_large"),
    /** regex: the case's {@code expected} is not a string, not valid RE2 syntax, or too large. */
    INVALID_PATTERN("invalid_pattern"),
    /** command: the program cannot be started. */
    EVALUATOR_NOT_FOUND("evaluator_not_found"),
    /** command: the program exited with a status other than 0 (or was killed by a signal). */
    EVALUATOR_CRASHED("evaluator_crashed"),
    /** command: stdout is not one number in [0, 1] (nor {@code {"score": n}}), or is too long. */
    INVALID_SCORE("invalid_score"),
    /**
     * command: over {@code timeout_seconds}; regex: over the worker's regex time limit; judge: its last attempt got
     * no complete answer within {@code timeout_seconds}.
     */
    TIMEOUT("timeout"),
    /**
     * judge, panel: no attempt's answer held a usable score (not parseable, or outside the scale); the message quotes
     * the judge's last answer. Never a failed verdict: the judge could not judge.
     */
    UNSCORED("unscored"),
    /**
     * judge, panel: the endpoint could not be used: refused the request (4xx), kept failing (429, 5xx, connection)
     * through every attempt, or answered too much.
     */
    JUDGE_FAILED("judge_failed"),
    /** cost: the agent called a model without a price in the run's pricing, so its cost cannot be compared. */
    COST_UNKNOWN("cost_unknown"),
    /** The calling thread was interrupted (regex, similarity, command, judge); not a result of the case. */
    CANCELLED("cancelled");

    private final String code;

    EvaluatorErrorType(String code) {
        this.code = code;
    }

    /** The stable snake_case code, e.g. {@code invalid_score}. */
    public String code() {
        return code;
    }
}
