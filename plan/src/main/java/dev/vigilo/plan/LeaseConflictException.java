package dev.vigilo.plan;

import java.util.UUID;

/** Another creator holds a live creation lease on the run. Retry after it finishes or its lease expires. */
public final class LeaseConflictException extends PlanException {
    public LeaseConflictException(UUID runId, String message) {
        super(runId, message);
    }
}
