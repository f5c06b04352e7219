package dev.vigilo.plan;

import java.util.UUID;

/**
 * A stored object (dataset or plan file) is missing, has different bytes than recorded, or does not decode. The run is
 * not published. Not retryable without repairing or recreating the affected object.
 */
public final class PlanDamagedException extends PlanException {
    public PlanDamagedException(UUID runId, String message, Throwable cause) {
        super(runId, message, cause);
    }

    public PlanDamagedException(UUID runId, String message) {
        super(runId, message);
    }
}
