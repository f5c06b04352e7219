package dev.vigilo.datagen;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;

/**
 * The per-step {@code concurrency} limits of a pipeline: at most N concurrent executions of a step
 * (a loop's body counts as its own step), across all workers. Steps without a limit are bounded by
 * the run's workers only. Safe for concurrent use by the workers.
 */
final class StepLimits {
    /** One attempt of a step. */
    @FunctionalInterface
    interface Attempt {
        StepResult run() throws StepFailure, InterruptedException;
    }

    /** Permits per limited step name; read-only after construction. */
    private final Map<String, Semaphore> permits = new HashMap<>();

    StepLimits(List<StepSpec> steps) {
        for (StepSpec s : steps) {
            if (s.concurrency() > 0) {
                permits.put(s.name(), new Semaphore(s.concurrency()));
            }
            if (s.body() != null && s.body().concurrency() > 0) {
                permits.put(s.body().name(), new Semaphore(s.body().concurrency()));
            }
        }
    }

    /** Runs {@code attempt} once a permit of {@code step} is free (at once if it has no limit). */
    StepResult run(StepSpec step, Attempt attempt) throws StepFailure, InterruptedException {
        Semaphore limit = permits.get(step.name());
        if (limit == null) {
            return attempt.run();
        }
        limit.acquire();
        try {
            return attempt.run();
        } finally {
            limit.release();
        }
    }
}
