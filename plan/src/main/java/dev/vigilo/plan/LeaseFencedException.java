package dev.vigilo.plan;

import java.util.UUID;

/**
 * This creator's lease expired or was taken over (a newer plan generation exists), or the run left the state that
 * allowed the mutation. Nothing was changed by the fenced operation; repeating the command resumes.
 */
public final class LeaseFencedException extends PlanException {
    public LeaseFencedException(UUID runId, String message) {
        super(runId, message);
    }
}
