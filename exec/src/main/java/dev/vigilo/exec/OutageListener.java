package dev.vigilo.exec;

import java.time.Duration;
import java.time.Instant;

/**
 * What a worker's outage waits report (docs/execution.md, "Outages"): an outage of a service began, was waited for
 * again, or ended. The outage part of {@code Worker.Listener}, declared here so that the waiting
 * ({@link OutageWaits}) does not depend on the worker room. Called from the thread that waits; implementations must
 * be quick and thread-safe.
 */
public interface OutageListener {
    /**
     * The worker began waiting for {@code service} at {@code target} (a store binding or a database alias): an
     * operation failed because it cannot be reached, is full or read-only. Once per outage.
     */
    default void outageBegan(Service service, String target, Instant since, String error) {}

    /** An operation waiting for {@code service} at {@code target} failed again: its {@code failures}-th wait. */
    default void outageWaited(Service service, String target, int failures) {}

    /** {@code service} at {@code target} answers again after {@code lasted} (or nothing waits for it any more). */
    default void outageEnded(Service service, String target, Duration lasted) {}
}
