package dev.vigilo.plan;

import java.util.Optional;
import java.util.UUID;

/**
 * Base of every failure of run preparation. Each message names the run it concerns so an operator can repeat the
 * command with the same {@code --run-id}. Subclasses say whether repeating can help:
 * {@link PlanValidationException} (bad input, nothing durable changed), {@link LeaseConflictException} (another
 * creator holds the run; retry after it finishes or its lease expires), {@link LeaseFencedException} (this creator
 * lost authority mid-way; repeat the command), {@link PlanDamagedException} (stored bytes are missing or differ).
 */
public class PlanException extends RuntimeException {
    private final UUID runId;

    public PlanException(UUID runId, String message) {
        super(prefix(runId) + message);
        this.runId = runId;
    }

    public PlanException(UUID runId, String message, Throwable cause) {
        super(prefix(runId) + message, cause);
        this.runId = runId;
    }

    private static String prefix(UUID runId) {
        return runId == null ? "" : "run " + runId + ": ";
    }

    /** The run this failure concerns, when one was chosen before the failure. */
    public Optional<UUID> runId() {
        return Optional.ofNullable(runId);
    }
}
