package dev.vigilo.plan;

import java.util.UUID;

/** Preparation was cancelled (the thread was interrupted, e.g. by Ctrl-C); ownership was yielded when possible. */
public final class PlanCancelledException extends PlanException {
    public PlanCancelledException(UUID runId, String message, Throwable cause) {
        super(runId, message, cause);
    }
}
