package dev.vigilo.plan;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.StateUnknownException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import java.util.List;
import java.util.UUID;

/**
 * The errors of run preparation, as the shared kinds. Every message starts with {@code run <id>: } so an operator
 * can repeat the command with the same {@code --run-id}:
 * {@link InvalidInputException} (bad input, nothing durable changed), {@link NotFoundException} (no such run),
 * {@link ConflictException} (another creator holds the run; retry after it finishes or its lease expires),
 * {@link FencedException} (this creator lost authority mid-way; repeat the command), {@link DamagedException}
 * (stored bytes are missing or differ), {@link CancelledException}, {@link StateUnknownException} (the publication
 * commit's outcome is unknown: repeat, never clean up) and {@link UnavailableException} (the database or the store
 * failed: repeat).
 */
final class PlanErrors {
    private PlanErrors() {}

    static InvalidInputException invalid(UUID runId, String problem) {
        return new InvalidInputException(prefix(runId) + problem);
    }

    static InvalidInputException invalid(UUID runId, List<String> problems) {
        return invalid(runId, String.join("; ", problems));
    }

    static NotFoundException notFound(UUID runId) {
        return new NotFoundException(prefix(runId) + "no such run; check the id (vigilo run create prints it)");
    }

    static ConflictException conflict(UUID runId, String message) {
        return new ConflictException(prefix(runId) + message);
    }

    static FencedException fenced(UUID runId, String message) {
        return new FencedException(prefix(runId) + message);
    }

    static DamagedException damaged(UUID runId, String message) {
        return new DamagedException(prefix(runId) + message);
    }

    static DamagedException damaged(UUID runId, String message, Throwable cause) {
        return new DamagedException(prefix(runId) + message, cause);
    }

    static CancelledException cancelled(UUID runId, String message, Throwable cause) {
        return new CancelledException(prefix(runId) + message, cause);
    }

    static StateUnknownException stateUnknown(UUID runId, String message, Throwable cause) {
        return new StateUnknownException(prefix(runId) + message, cause);
    }

    static UnavailableException unavailable(UUID runId, String message, Throwable cause) {
        return new UnavailableException(prefix(runId) + message, cause);
    }

    /**
     * Whether {@code e} was raised by preparation itself for {@code runId} (it names the run), as opposed to a
     * failure of the store, the dataset or the database that preparation still has to explain.
     */
    static boolean namesRun(VigiloException e, UUID runId) {
        return e.getMessage() != null && e.getMessage().startsWith(prefix(runId));
    }

    private static String prefix(UUID runId) {
        return runId == null ? "" : "run " + runId + ": ";
    }
}
