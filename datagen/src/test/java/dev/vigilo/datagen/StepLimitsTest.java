package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class StepLimitsTest {
    static final PipelineSpec SPEC = PipelineParser.parse("p.yaml", """
            name: limits
            input: seeds.jsonl
            steps:
              - {name: limited, kind: template, template: x, output_field: y, concurrency: 2}
              - {name: free, kind: template, template: x, output_field: y}
              - name: loop
                kind: loop
                max_iterations: 2
                until: {field: y}
                body: {name: body, kind: template, template: x, output_field: y, concurrency: 1}
            """, Path.of("/base"));

    static StepSpec step(String name) {
        return SPEC.steps().stream()
                .map(s -> s.name().equals("loop") ? s.body() : s)
                .filter(s -> s.name().equals(name))
                .findFirst()
                .orElseThrow();
    }

    /**
     * Runs {@code threads} attempts of {@code step} at once; each waits until {@code together}
     * attempts run (so the limit is reached) and returns the most that ran at once.
     */
    static int maxConcurrent(StepLimits limits, StepSpec step, int threads, int together) throws Exception {
        AtomicInteger active = new AtomicInteger();
        AtomicInteger max = new AtomicInteger();
        CyclicBarrier barrier = new CyclicBarrier(together);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<StepResult>> results = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                results.add(pool.submit(() -> limits.run(step, () -> {
                    max.accumulateAndGet(active.incrementAndGet(), Math::max);
                    try {
                        if (together > 1) {
                            barrier.await(10, TimeUnit.SECONDS);
                        } else {
                            Thread.sleep(20);
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    } finally {
                        active.decrementAndGet();
                    }
                    return StepResult.of(Json.MAPPER.createObjectNode());
                })));
            }
            for (Future<StepResult> r : results) {
                r.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        return max.get();
    }

    @Test
    void aLimitedStepRunsAtMostItsConcurrencyAtOnce() throws Exception {
        StepLimits limits = new StepLimits(SPEC.steps());
        assertThat(maxConcurrent(limits, step("limited"), 6, 2)).isEqualTo(2);
        assertThat(maxConcurrent(limits, step("body"), 4, 1)).isEqualTo(1);
    }

    @Test
    void anUnlimitedStepIsBoundedByTheCallersOnly() throws Exception {
        assertThat(maxConcurrent(new StepLimits(SPEC.steps()), step("free"), 4, 4))
                .isEqualTo(4);
    }

    @Test
    void aFailedAttemptReleasesItsPermit() throws Exception {
        StepLimits limits = new StepLimits(SPEC.steps());
        StepSpec body = step("body");
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> limits.run(body, () -> {
                        throw new StepFailure("CommandExitError", "exit 1", null);
                    }))
                    .isInstanceOf(StepFailure.class);
        }
        // The only permit is free again: this would block forever otherwise.
        assertThat(maxConcurrent(limits, body, 1, 1)).isEqualTo(1);
    }
}
