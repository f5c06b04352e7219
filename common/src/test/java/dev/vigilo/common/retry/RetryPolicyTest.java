package dev.vigilo.common.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {
    private final RetryPolicy policy = RetryPolicy.of(4, Duration.ofMillis(1), Duration.ofMillis(4));

    @Test
    void retriesUnavailableUntilSuccess() {
        AtomicInteger calls = new AtomicInteger();
        String result = policy.run(attempt -> {
            calls.incrementAndGet();
            if (attempt < 3) {
                throw new UnavailableException("store down");
            }
            return "ok@" + attempt;
        });
        assertThat(result).isEqualTo("ok@3");
        assertThat(calls).hasValue(3);
    }

    @Test
    void rethrowsTheLastFailureWhenAttemptsRunOut() {
        AtomicInteger calls = new AtomicInteger();
        assertThatThrownBy(() -> policy.run(attempt -> {
                    calls.incrementAndGet();
                    throw new UnavailableException("down " + attempt);
                }))
                .isInstanceOf(UnavailableException.class)
                .hasMessage("down 4");
        assertThat(calls).hasValue(4);
    }

    @Test
    void doesNotRetryOtherKinds() {
        AtomicInteger calls = new AtomicInteger();
        assertThatThrownBy(() -> policy.run(attempt -> {
                    calls.incrementAndGet();
                    throw new InvalidInputException("bad id");
                }))
                .isInstanceOf(InvalidInputException.class);
        assertThat(calls).hasValue(1);
    }

    @Test
    void backoffDoublesUpToTheCap() {
        RetryPolicy p = RetryPolicy.of(10, Duration.ofMillis(100), Duration.ofMillis(500));
        assertThat(p.backoffBound(2)).isEqualTo(Duration.ofMillis(100));
        assertThat(p.backoffBound(3)).isEqualTo(Duration.ofMillis(200));
        assertThat(p.backoffBound(4)).isEqualTo(Duration.ofMillis(400));
        assertThat(p.backoffBound(5)).isEqualTo(Duration.ofMillis(500));
        assertThat(p.backoffBound(9)).isEqualTo(Duration.ofMillis(500));
    }

    @Test
    void theSleepLimitCapsEveryWait() {
        RetryPolicy slow = RetryPolicy.of(3, Duration.ofSeconds(60), Duration.ofSeconds(60));
        AtomicInteger calls = new AtomicInteger();
        // Uncapped, the two waits would take up to two minutes; capped at zero, the three attempts run at once.
        String result = assertTimeoutPreemptively(
                Duration.ofSeconds(30),
                () -> slow.run(
                        attempt -> {
                            calls.incrementAndGet();
                            if (attempt < 3) {
                                throw new UnavailableException("down");
                            }
                            return "ok@" + attempt;
                        },
                        () -> Duration.ZERO));
        assertThat(result).isEqualTo("ok@3");
        assertThat(calls).hasValue(3);
    }

    @Test
    void interruptWhileWaitingCancels() {
        RetryPolicy slow = RetryPolicy.of(3, Duration.ofSeconds(30), Duration.ofSeconds(30));
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> slow.run(attempt -> {
                        throw new UnavailableException("down");
                    }))
                    .isInstanceOf(CancelledException.class)
                    .hasMessageContaining("down");
        } finally {
            Thread.interrupted();
        }
    }
}
