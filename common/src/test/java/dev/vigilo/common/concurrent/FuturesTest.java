package dev.vigilo.common.concurrent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link Futures#supplyInterruptibly}: blocking work whose future's cancellation interrupts it. */
class FuturesTest {
    final ExecutorService pool = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void cancellingTheFutureInterruptsTheWork() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        CompletableFuture<String> f = Futures.supplyInterruptibly(pool, () -> {
            started.countDown();
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                interrupted.countDown();
            }
            return "never seen";
        });
        started.await();
        assertThat(f.cancel(true)).isTrue();
        interrupted.await(); // would time the test out if the cancellation did not reach the thread
        assertThat(f).isCancelled();
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void theResultOrTheFailureOfTheWorkCompletesTheFuture() throws Exception {
        assertThat(Futures.supplyInterruptibly(pool, () -> "done").get()).isEqualTo("done");
        CompletableFuture<String> failed = Futures.supplyInterruptibly(pool, () -> {
            throw new IllegalStateException("broken");
        });
        assertThatThrownBy(failed::get)
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("broken");
    }

    @Test
    void aPoolThatRefusesFailsTheFuture() {
        pool.shutdown();
        assertThat(Futures.supplyInterruptibly(pool, () -> "x")).isCompletedExceptionally();
    }
}
