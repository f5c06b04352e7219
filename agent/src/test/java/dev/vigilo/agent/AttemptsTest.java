package dev.vigilo.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.SecretValues;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Attempts#run}, the blocking loop, which runs {@link Attempts#runAsync}'s sequence with the calling thread as
 * its work pool: every attempt and its handling on the calling thread, retries as the asynchronous loop makes them,
 * and the interrupt semantics of a worker thread (a cancelled call, the interrupt status kept).
 */
@Timeout(60)
class AttemptsTest {
    @TempDir
    Path dir;

    private Attempts attempts(int max, Duration initialBackoff, Duration maxBackoff, SecretValues secrets) {
        return new Attempts(
                max,
                new AgentEnvironment(
                        System.getenv(),
                        dir,
                        dir,
                        initialBackoff,
                        maxBackoff,
                        Duration.ofSeconds(5),
                        AgentEnvironment.DEFAULT_REGEX_TIME_LIMIT,
                        secrets));
    }

    private static Attempts.Result retryable() {
        return Attempts.Result.failed(new AgentError(AgentErrorType.HTTP_STATUS, "503 from the endpoint", true));
    }

    @Test
    void everyAttemptAndItsHandlingRunOnTheCallingThread() {
        Attempts a = attempts(3, Duration.ofMillis(1), Duration.ofMillis(5), SecretValues.NONE);
        List<Thread> bodies = new CopyOnWriteArrayList<>();
        List<Thread> ends = new CopyOnWriteArrayList<>();
        AgentObserver observer = new AgentObserver() {
            @Override
            public void onAttemptEnd(AgentAttempt attempt) {
                ends.add(Thread.currentThread());
            }
        };
        AgentOutcome o = a.run(observer, CaseBudget.NONE, (n, obs, left) -> {
            bodies.add(Thread.currentThread());
            return n < 3 ? retryable() : Attempts.Result.ok("third time");
        });
        assertThat(o.status()).isEqualTo(AgentOutcome.Status.OK);
        assertThat(o.output()).contains("third time");
        assertThat(o.attempts()).hasSize(3);
        assertThat(o.attempts().get(0).error()).isPresent();
        assertThat(bodies).hasSize(3).containsOnly(Thread.currentThread());
        assertThat(ends).hasSize(3).containsOnly(Thread.currentThread());
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }

    @Test
    void theLastErrorEndsTheCallAfterMaxAttemptsAndANonRetryableOneAtOnce() {
        Attempts a = attempts(2, Duration.ZERO, Duration.ZERO, SecretValues.NONE);
        AgentOutcome o = a.run(AgentObserver.NONE, CaseBudget.NONE, (n, obs, left) -> retryable());
        assertThat(o.status()).isEqualTo(AgentOutcome.Status.ERROR);
        assertThat(o.attempts()).hasSize(2);
        assertThat(o.error().orElseThrow().message()).isEqualTo("503 from the endpoint");

        AgentOutcome once = a.run(
                AgentObserver.NONE,
                CaseBudget.NONE,
                (n, obs, left) ->
                        Attempts.Result.failed(AgentError.of(AgentErrorType.AGENT_NOT_FOUND, "no such program")));
        assertThat(once.attempts()).hasSize(1);
        assertThat(once.error().orElseThrow().type()).isEqualTo(AgentErrorType.AGENT_NOT_FOUND);
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }

    @Test
    void outputsAndErrorsAreMaskedAsTheAsynchronousLoopMasksThem() throws Exception {
        SecretValues secrets = SecretValues.of(List.of("sk-very-secret-value"));
        Attempts a = attempts(2, Duration.ZERO, Duration.ZERO, secrets);
        Attempts.Body body = (n, obs, left) -> n == 1
                ? Attempts.Result.failed(
                        new AgentError(AgentErrorType.HTTP_STATUS, "bad key sk-very-secret-value", true))
                : Attempts.Result.ok("the key is sk-very-secret-value");
        AgentOutcome blocking = a.run(AgentObserver.NONE, CaseBudget.NONE, body);
        AgentOutcome async = a.runAsync(
                        AgentObserver.NONE,
                        CaseBudget.NONE,
                        Runnable::run,
                        (n, obs, left) -> CompletableFuture.completedFuture(body.attempt(n, obs, left)))
                .get(10, TimeUnit.SECONDS);
        assertThat(blocking.output()).contains("the key is ***");
        assertThat(blocking.output()).isEqualTo(async.output());
        assertThat(blocking.attempts().get(0).error().orElseThrow().message()).isEqualTo("bad key ***");
        assertThat(async.attempts().get(0).error().orElseThrow().message()).isEqualTo("bad key ***");
    }

    @Test
    void anInterruptWhileWaitingToRetryCancelsTheCallAndKeepsTheInterrupt() throws Exception {
        // A back-off of a minute: the wait is interrupted long before it ends.
        Attempts a = attempts(3, Duration.ofSeconds(60), Duration.ofSeconds(60), SecretValues.NONE);
        CountDownLatch attempted = new CountDownLatch(1);
        AtomicReference<AgentOutcome> outcome = new AtomicReference<>();
        AtomicReference<Boolean> interruptedAfter = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            outcome.set(a.run(AgentObserver.NONE, CaseBudget.NONE, (n, obs, left) -> {
                attempted.countDown();
                return Attempts.Result.failed(
                        new AgentError(AgentErrorType.HTTP_STATUS, "503 from the endpoint", true),
                        Duration.ofSeconds(60));
            }));
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        });
        caller.start();
        assertThat(attempted.await(10, TimeUnit.SECONDS)).isTrue();
        caller.interrupt();
        caller.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(caller.isAlive()).isFalse();
        AgentOutcome o = outcome.get();
        assertThat(o.status()).isEqualTo(AgentOutcome.Status.ERROR);
        assertThat(o.attempts()).hasSize(1);
        assertThat(o.error().orElseThrow().type()).isEqualTo(AgentErrorType.CANCELLED);
        assertThat(o.error().orElseThrow().message())
                .isEqualTo("cancelled while waiting to retry (the worker was interrupted); the last attempt failed: "
                        + "503 from the endpoint");
        assertThat(interruptedAfter.get()).isTrue();
    }

    @Test
    void anInterruptedThreadStartsNoAttemptAndAnAttemptThatSawItEndsTheCall() {
        Attempts a = attempts(3, Duration.ZERO, Duration.ZERO, SecretValues.NONE);
        Thread.currentThread().interrupt();
        try {
            List<Integer> started = new CopyOnWriteArrayList<>();
            AgentOutcome o = a.run(AgentObserver.NONE, CaseBudget.NONE, (n, obs, left) -> {
                started.add(n);
                return Attempts.Result.ok("never");
            });
            assertThat(started).isEmpty();
            assertThat(o.error().orElseThrow().type()).isEqualTo(AgentErrorType.CANCELLED);
            assertThat(o.error().orElseThrow().message()).isEqualTo("not started: the worker was interrupted");
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }

        // An attempt interrupted while it runs (a command killed) ends cancelled, not retried; the status is set.
        List<Integer> started = new CopyOnWriteArrayList<>();
        try {
            AgentOutcome o = a.run(AgentObserver.NONE, CaseBudget.NONE, (n, obs, left) -> {
                started.add(n);
                // What a body does when it sees the interrupt: clears it, stops its work, reports cancelled.
                return Attempts.Result.failed(AgentError.of(AgentErrorType.CANCELLED, "the agent was stopped"));
            });
            assertThat(started).containsExactly(1);
            assertThat(o.error().orElseThrow().message()).isEqualTo("the agent was stopped");
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void aBodyThatThrowsThrowsOutOfTheCall() {
        Attempts a = attempts(3, Duration.ZERO, Duration.ZERO, SecretValues.NONE);
        assertThatThrownBy(() -> a.run(AgentObserver.NONE, CaseBudget.NONE, (n, obs, left) -> {
                    throw new IllegalStateException("broken body");
                }))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("broken body");
    }
}
