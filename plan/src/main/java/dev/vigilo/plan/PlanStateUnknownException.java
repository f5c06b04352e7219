package dev.vigilo.plan;

import java.util.UUID;

/**
 * The publication transaction was sent but its outcome is unknown (the connection failed during the statement or
 * the commit). Do not clean anything up: repeat the command with the same run id, which either finds the plan
 * published or resumes and publishes it.
 */
public final class PlanStateUnknownException extends PlanException {
    public PlanStateUnknownException(UUID runId, String message, Throwable cause) {
        super(runId, message, cause);
    }
}
