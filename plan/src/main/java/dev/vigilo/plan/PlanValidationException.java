package dev.vigilo.plan;

import java.util.List;
import java.util.UUID;

/**
 * The request is invalid (profile, dataset binding, storage binding, or a repeat that differs from the run's frozen
 * inputs). Thrown before anything durable changes, or, for a repeat, without changing the run. Never retryable as is.
 */
public class PlanValidationException extends PlanException {
    private final List<String> problems;

    public PlanValidationException(UUID runId, List<String> problems) {
        super(runId, String.join("; ", problems));
        this.problems = List.copyOf(problems);
    }

    public PlanValidationException(UUID runId, String problem) {
        this(runId, List.of(problem));
    }

    /** Every problem found, each naming what, where, and what to do. */
    public List<String> problems() {
        return problems;
    }
}
