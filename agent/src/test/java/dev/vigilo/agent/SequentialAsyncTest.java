package dev.vigilo.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * The chain {@link EvaluatorSet} and {@link PanelEvaluator} run their evaluators and judges on: one step at a time,
 * the next started only when the one before completed; stopped by a step's value; failed by a failed step or a
 * throwing step; cancelling it cancels the step in flight and starts no other.
 */
class SequentialAsyncTest {
    /** Steps whose futures the test completes by hand; {@code stopAt} ends the chain when accepted. */
    static class Manual implements SequentialAsync.Steps<Integer, List<Integer>> {
        final List<CompletableFuture<Integer>> started = new ArrayList<>();
        final List<Integer> values = new ArrayList<>();
        final int steps;
        final int stopAt;

        Manual(int steps, int stopAt) {
            this.steps = steps;
            this.stopAt = stopAt;
        }

        @Override
        public CompletableFuture<Integer> next() {
            if (started.size() == steps) {
                return null;
            }
            CompletableFuture<Integer> f = new CompletableFuture<>();
            started.add(f);
            return f;
        }

        @Override
        public boolean accept(Integer value) {
            values.add(value);
            return value != stopAt;
        }

        @Override
        public List<Integer> result() {
            return values;
        }
    }

    @Test
    void stepsRunOneAfterAnotherAndTheChainCompletesWithTheirResult() throws Exception {
        Manual m = new Manual(3, -1);
        CompletableFuture<List<Integer>> out = SequentialAsync.run(m);
        assertThat(m.started).hasSize(1);
        m.started.get(0).complete(10);
        assertThat(m.started).hasSize(2);
        assertThat(out).isNotDone();
        m.started.get(1).complete(11);
        m.started.get(2).complete(12);
        assertThat(out.get()).containsExactly(10, 11, 12);
    }

    @Test
    void aValueTheStepsRefuseEndsTheChainThere() throws Exception {
        Manual m = new Manual(3, 7);
        CompletableFuture<List<Integer>> out = SequentialAsync.run(m);
        m.started.get(0).complete(7);
        assertThat(out.get()).containsExactly(7);
        assertThat(m.started).hasSize(1);
    }

    @Test
    void noStepsCompleteAtOnce() throws Exception {
        assertThat(SequentialAsync.run(new Manual(0, -1)).get()).isEmpty();
    }

    @Test
    void aFailedStepFailsTheChainWithItsCause() {
        Manual m = new Manual(3, -1);
        CompletableFuture<List<Integer>> out = SequentialAsync.run(m);
        m.started.get(0).complete(1);
        IllegalStateException boom = new IllegalStateException("boom");
        m.started.get(1).completeExceptionally(new java.util.concurrent.CompletionException(boom));
        assertThatThrownBy(out::get).isInstanceOf(ExecutionException.class).hasCause(boom);
        assertThat(m.started).hasSize(2);
    }

    @Test
    void aStepThatThrowsWhenStartedFailsTheChain() {
        CompletableFuture<List<Integer>> out = SequentialAsync.run(new Manual(1, -1) {
            @Override
            public CompletableFuture<Integer> next() {
                throw new IllegalArgumentException("bad step");
            }
        });
        assertThatThrownBy(out::get).hasCauseInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void cancellingTheChainCancelsTheStepInFlightAndStartsNoOther() {
        Manual m = new Manual(3, -1);
        CompletableFuture<List<Integer>> out = SequentialAsync.run(m);
        m.started.get(0).complete(1);
        out.cancel(true);
        assertThat(m.started.get(1)).isCancelled();
        assertThat(m.started).hasSize(2);
        assertThat(m.values).containsExactly(1);
    }
}
