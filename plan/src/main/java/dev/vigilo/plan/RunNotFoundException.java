package dev.vigilo.plan;

import java.util.UUID;

/** No run with this id exists in the control database. */
public final class RunNotFoundException extends PlanException {
    public RunNotFoundException(UUID runId) {
        super(runId, "no such run; check the id (vigilo run create prints it)");
    }
}
